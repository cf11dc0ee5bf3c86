// The bulk driver's pieces that are not covered through the public API.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "block_owners.hpp"
#include "probkit/probkit.hpp"

namespace probkit::detail {
namespace {

// The owner of a block is b * workers / num_blocks: the multiply-based
// division must equal the real one for every divisor and every numerator the
// driver can form (below 2^32 blocks times 2^8 workers), edges included.
TEST(Divider, EqualsDivisionEverywhereTheDriverUsesIt) {
  std::mt19937_64 rng(20261130);
  std::vector<std::uint64_t> divisors{
      1, 2, 3, 7, 1000, 65535, 65536, 65537, 0xFFFFFFFFULL, 0xFFFFFFFEULL};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 0xFFFFFFFFULL);
  for (std::uint64_t d : divisors) {
    const Divider div(d);
    const std::uint64_t limit = d * 256;  // b < d blocks, times at most 256 workers
    std::vector<std::uint64_t> xs{0, 1, d - 1, d, d + 1, limit - 1};
    for (std::uint64_t q :
         {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{17}, std::uint64_t{255}}) {
      xs.push_back(q * d - 1);
      xs.push_back(q * d);
      xs.push_back(q * d + 1);
    }
    for (int i = 0; i < 200; ++i) xs.push_back(rng() % limit);
    for (std::uint64_t x : xs) {
      if (x >= limit) continue;
      ASSERT_EQ(div(x), x / d) << "x " << x << " d " << d;
    }
  }
}

// OwnedHashes must give each hash to exactly the worker that the sorted path
// gives its block to (b * workers / num_blocks), at the edges of every share:
// the hashes whose high half is each threshold and one below it.
TEST(OwnedHashes, EachHashBelongsToItsBlocksOwner) {
  std::mt19937_64 rng(20261201);
  std::vector<std::uint64_t> block_counts{1, 2, 3, 5, 1000, 65537, 0xFFFFFFFFULL, 0xFFFFFFFEULL};
  for (int i = 0; i < 30; ++i) block_counts.push_back(1 + rng() % 0xFFFFFFFFULL);
  for (std::uint64_t nb : block_counts) {
    for (unsigned workers : {2u, 3u, 4u, 7u, 64u}) {
      std::vector<OwnedHashes> owned;
      for (unsigned w = 0; w < workers; ++w) owned.emplace_back(w, workers, nb);
      std::vector<std::uint64_t> hashes{0, ~std::uint64_t{0}};
      for (int i = 0; i < 100; ++i) hashes.push_back(rng());
      for (unsigned w = 1; w < workers; ++w) {  // the first hash of each block a share starts with
        const std::uint64_t first_block = (w * nb + workers - 1) / workers;
        if (first_block >= nb) continue;
        const std::uint64_t high = ((first_block << 32) + nb - 1) / nb;
        hashes.push_back(high << 32);
        hashes.push_back((high << 32) - 1);
        hashes.push_back((high << 32) | 0xFFFFFFFFULL);
      }
      for (std::uint64_t h : hashes) {
        const std::uint64_t owner = layout::block_index(h, nb) * workers / nb;
        for (unsigned w = 0; w < workers; ++w) {
          ASSERT_EQ(owned[w].contains(h), w == owner)
              << "nb " << nb << " workers " << workers << " w " << w << " h " << h;
        }
      }
    }
  }
}

// One thread: a push takes only what fits, hashes come out in order across
// the wrap of the buffer, and a drain of an empty ring calls nothing.
TEST(HashRing, PushesWhatFitsAndDrainsInOrderAcrossTheWrap) {
  HashRing ring(8);
  std::vector<std::uint64_t> got;
  const auto take = [&](const std::uint64_t* h, std::size_t n) { got.insert(got.end(), h, h + n); };
  const std::vector<std::uint64_t> a{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ring.push(a.data(), a.size()), 6u);
  EXPECT_EQ(ring.drain(take), 6u);
  const std::vector<std::uint64_t> b{7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  EXPECT_EQ(ring.push(b.data(), b.size()), 8u);  // full: 7..14, from slot 6 round to slot 5
  EXPECT_EQ(ring.push(b.data() + 8, 2), 0u);
  EXPECT_EQ(ring.drain(take), 8u);
  EXPECT_EQ(ring.drain(take), 0u);
  EXPECT_EQ(ring.push(b.data() + 8, 2), 2u);
  EXPECT_FALSE(ring.closed());
  ring.close();
  EXPECT_TRUE(ring.closed());
  EXPECT_EQ(ring.drain(take), 2u);
  std::vector<std::uint64_t> want(16);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = i + 1;
  EXPECT_EQ(got, want);
}

// Two threads through a ring of 16: every hash arrives once, in order, and
// the consumer's last drain after it sees the ring closed gets the rest.
TEST(HashRing, CarriesEveryHashBetweenTwoThreads) {
  constexpr std::uint64_t kCount = 200000;
  HashRing ring(16);
  std::vector<std::uint64_t> got;
  std::thread producer([&] {
    std::vector<std::uint64_t> piece;
    for (std::uint64_t next = 0; next < kCount;) {
      piece.clear();
      for (std::uint64_t i = 0; i < 1 + next % 23 && next + i < kCount; ++i) piece.push_back(next + i);
      for (std::size_t sent = 0; sent < piece.size();) sent += ring.push(piece.data() + sent, piece.size() - sent);
      next += piece.size();
    }
    ring.close();
  });
  const auto take = [&](const std::uint64_t* h, std::size_t n) { got.insert(got.end(), h, h + n); };
  for (;;) {
    const bool last = ring.closed();
    if (ring.drain(take) == 0 && last) break;
  }
  producer.join();
  ASSERT_EQ(got.size(), kCount);
  for (std::uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(got[i], i);
}

// The two-worker exchange, with rings so small that producers fill them and
// wait: every hash is inserted exactly once, by a thread that inserts only
// the hashes of one worker's blocks, and the threads that insert are two.
TEST(ExchangedHashChunks, EachHashIsInsertedOnceByItsBlocksOwner) {
  std::vector<std::uint64_t> hashes(100003);
  std::mt19937_64 rng(20261201);
  for (auto& h : hashes) h = rng();
  const std::uint64_t nb = 40001;
  const Keys keys{Prehashed{hashes}};
  for (std::size_t capacity : {std::size_t{1}, std::size_t{64}, kExchangeRing}) {
    std::mutex mutex;
    std::map<std::thread::id, std::vector<std::uint64_t>> inserted;
    for_each_exchanged_hash_chunk(
        scalar_kernels(), keys.batch(), HashSpec{}, nb,
        [&](const std::uint64_t* h, std::size_t n) {
          std::lock_guard lock(mutex);
          auto& mine = inserted[std::this_thread::get_id()];
          mine.insert(mine.end(), h, h + n);
        },
        capacity);
    ASSERT_EQ(inserted.size(), 2u) << "capacity " << capacity;
    std::vector<std::uint64_t> all;
    std::vector<bool> owner_seen(2, false);
    for (const auto& [thread, mine] : inserted) {
      const std::uint64_t owner = layout::block_index(mine.front(), nb) * 2 / nb;
      EXPECT_FALSE(owner_seen[owner]) << "two threads inserted worker " << owner << "'s hashes";
      owner_seen[owner] = true;
      for (std::uint64_t h : mine) {
        ASSERT_EQ(layout::block_index(h, nb) * 2 / nb, owner) << "capacity " << capacity;
      }
      all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<std::uint64_t> want = hashes;
    std::sort(want.begin(), want.end());
    EXPECT_EQ(all, want) << "capacity " << capacity;
  }
}

// The three multi-threaded add paths (private copies; two workers handing
// each other hashes; more sorting by owner in rounds) build the 1-thread filter, for every key
// kind that hashes differently.
TEST(MultiThreadedAdd, EveryPathBuildsTheOneThreadFilter) {
  std::vector<std::uint64_t> keys(300000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i * 0x9E3779B97F4A7C15ULL;
  std::vector<std::int32_t> offsets(keys.size() + 1);
  std::vector<std::uint8_t> data;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    offsets[i] = static_cast<std::int32_t>(data.size());
    for (std::size_t b = 0; b < 1 + i % 13; ++b) data.push_back(static_cast<std::uint8_t>(keys[i] >> (8 * (b % 8))));
  }
  offsets.back() = static_cast<std::int32_t>(data.size());
  const std::vector<Keys> batches{Keys(keys), Keys(Prehashed{keys}), Keys(StringBatch<std::int32_t>{offsets, data})};
  // 1000 blocks: private copies; 40000 (2.4 MiB): shared, divided by block.
  for (std::uint64_t nb : {std::uint64_t{1000}, std::uint64_t{40000}}) {
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      const std::uint32_t k = layout == BloomLayout::Cacheline512 ? 7 : 8;
      for (std::size_t b = 0; b < batches.size(); ++b) {
        set_threads(1);
        BloomFilter want(nb, k, layout);
        want.add(batches[b]);
        for (unsigned threads : {2u, 3u, 4u}) {
          set_threads(threads);
          BloomFilter got(nb, k, layout);
          got.add(batches[b]);
          EXPECT_TRUE(got == want) << "nb " << nb << " layout " << int(layout) << " batch " << b << " threads "
                                   << threads;
        }
      }
    }
  }
  set_threads(0);
}

}  // namespace
}  // namespace probkit::detail
