// The bulk driver's pieces that are not covered through the public API.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <hwy/targets.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "block_owners.hpp"
#include "copy_buffers.hpp"
#include "dispatch.hpp"
#include "probkit/probkit.hpp"
#include "worker_pool.hpp"

namespace probkit::detail {
namespace {

// HashOwners must give each hash to the owner of its block, b * workers /
// num_blocks (and HashOwners::range(w) must hold it for that owner and no
// other), for every worker count up to the number of blocks, at the edges of
// every share: the hashes whose high half is the first of a share's
// range and one below it, and the hashes around each multiple of 2^32 /
// workers, where the estimate it corrects moves to the next worker.
TEST(HashOwners, EachHashBelongsToItsBlocksOwner) {
  std::mt19937_64 rng(20261201);
  std::vector<std::uint64_t> block_counts{1, 2, 3, 5, 63, 64, 65, 1000, 65537, 0xFFFFFFFFULL, 0xFFFFFFFEULL};
  for (int i = 0; i < 30; ++i) block_counts.push_back(1 + rng() % 0xFFFFFFFFULL);
  for (std::uint64_t nb : block_counts) {
    for (unsigned workers : {1u, 2u, 3u, 4u, 7u, 63u, 64u}) {
      if (workers > nb) continue;
      const HashOwners owner_of(workers, nb);
      std::vector<std::uint64_t> hashes{0, ~std::uint64_t{0}};
      for (int i = 0; i < 100; ++i) hashes.push_back(rng());
      for (unsigned w = 1; w < workers; ++w) {
        for (std::uint64_t high : {owner_of.first(w), ((std::uint64_t{w} << 32) + workers - 1) / workers}) {
          for (std::uint64_t h : {high << 32, (high << 32) - 1, (high << 32) | std::uint64_t{0xFFFFFFFF}})
            hashes.push_back(h);
        }
      }
      for (std::uint64_t h : hashes) {
        const std::uint64_t owner = layout::block_index(h, nb) * workers / nb;
        ASSERT_EQ(owner_of(h), owner) << "nb " << nb << " workers " << workers << " h " << h;
        for (unsigned w = 0; w < workers; ++w) {
          ASSERT_EQ(owner_of.range(w).contains(h), w == owner) << "nb " << nb << " workers " << workers << " h " << h;
        }
      }
    }
  }
}

// One thread: a push takes only what fits, pops take at most what they are
// asked for, hashes come out in order across the wrap of the buffer, and a
// pop from an empty ring takes nothing.
TEST(HashRing, PushesWhatFitsAndPopsInOrderAcrossTheWrap) {
  HashRing ring(8);
  std::vector<std::uint64_t> got;
  std::uint64_t out[16];
  const auto take = [&](std::size_t max) {
    const std::size_t n = ring.pop(out, max);
    got.insert(got.end(), out, out + n);
    return n;
  };
  const std::vector<std::uint64_t> a{1, 2, 3, 4, 5, 6};
  EXPECT_EQ(ring.push(a.data(), a.size()), 6u);
  EXPECT_EQ(take(16), 6u);
  const std::vector<std::uint64_t> b{7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  EXPECT_EQ(ring.push(b.data(), b.size()), 8u);  // full: 7..14, from slot 6 round to slot 5
  EXPECT_EQ(ring.push(b.data() + 8, 2), 0u);
  EXPECT_EQ(take(3), 3u);  // 7..9: slots 6, 7 and 0
  EXPECT_EQ(take(16), 5u);
  EXPECT_EQ(take(16), 0u);
  EXPECT_EQ(ring.push(b.data() + 8, 2), 2u);
  EXPECT_FALSE(ring.closed());
  ring.close();
  EXPECT_TRUE(ring.closed());
  EXPECT_EQ(take(16), 2u);
  std::vector<std::uint64_t> want(16);
  for (std::size_t i = 0; i < want.size(); ++i) want[i] = i + 1;
  EXPECT_EQ(got, want);
}

// Two threads through a ring of 16: every hash arrives once, in order, and
// the consumer's last pop after it sees the ring closed gets the rest.
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
  std::uint64_t out[7];
  for (;;) {
    const bool last = ring.closed();
    const std::size_t n = ring.pop(out, std::size(out));
    got.insert(got.end(), out, out + n);
    if (n == 0 && last) break;
  }
  producer.join();
  ASSERT_EQ(got.size(), kCount);
  for (std::uint64_t i = 0; i < kCount; ++i) ASSERT_EQ(got[i], i);
}

// The exchange, with rings so small that producers fill them, and held
// hashes beyond them (HeldHashes) so few that producers wait, or so many
// that the receivers read most of them once the rings close: every hash is
// inserted exactly once, by a thread that inserts only the hashes of one
// worker's blocks, and the threads that insert are as many as the workers
// (fewer where there are fewer blocks). An insertion carries ahead either
// none or max_ahead hashes, some carry max_ahead (every thread inserts more
// than a chunk), and those are the first that thread inserts next, which it
// is told are primed (BloomLookahead::primed; 0 otherwise). Three and
// more workers on two cores also run the oversubscribed (yielding) waits.
// The scalar kernels throughout; each target with its own partition_hashes
// (which two workers sort with) with the default rings and the most hashes ahead.
// Pre-hashed keys, and u64 keys hashed in pieces shorter than the hashes
// ahead (the insertions between the pieces keep the same contract).
TEST(ExchangedHashChunks, EachHashIsInsertedOnceByItsBlocksOwner) {
  // Six chunks and more a worker at 5 workers. Every hash crosses rings of one
  // or 64 slots here, and each wait for room yields once its spin runs out:
  // 100003 hashes took 6 s under ASan on two idle cores, 108 s beside two busy
  // loops and past ctest's 300 s beside a build.
  std::vector<std::uint64_t> values(30011);
  std::mt19937_64 rng(20261201);
  for (auto& v : values) v = rng();
  const Keys prehashed{Prehashed{values}};
  const Keys u64_keys{std::span<const std::uint64_t>(values)};
  std::vector<std::uint64_t> u64_hashes(values.size());
  scalar_kernels().hash(u64_keys.batch(), 0, values.size(), HashSpec{}, u64_hashes.data());
  struct Input {
    const char* what;
    const Keys* keys;
    const std::vector<std::uint64_t>* hashes;
    std::size_t piece;
  };
  const Input inputs[] = {{"prehashed", &prehashed, &values, kHashChunk},
                          {"u64 pieces 100", &u64_keys, &u64_hashes, 100}};
  std::vector<std::pair<const char*, const CpuKernels*>> kernels = {{"scalar", &scalar_kernels()}};
  const SimdTarget* targets = nullptr;
  for (std::size_t i = 0, n = compiled_simd_targets(&targets); i < n; ++i) {
    if ((hwy::SupportedTargets() & targets[i].bit) != 0 && targets[i].kernels->partition_hashes != nullptr) {
      kernels.push_back({targets[i].name, targets[i].kernels});
    }
  }
  struct Exchange {
    std::size_t capacity, held, max_ahead;
  };
  for (const auto& [name, kernel] : kernels) {
    const bool scalar = kernel == &scalar_kernels();
    std::vector<Exchange> exchanges;
    for (auto [capacity, held] : {std::pair<std::size_t, std::size_t>{1, 1}, {1, 0}, {64, 1}, {64, 0}, {0, 0}}) {
      for (std::size_t max_ahead : {std::size_t{0}, std::size_t{5}, kBloomPrefetchKeysAhead}) {
        if (scalar || (capacity == 0 && max_ahead == kBloomPrefetchKeysAhead)) {
          exchanges.push_back({capacity, held, max_ahead});
        }
      }
    }
    for (const Input& input : inputs) {
      const std::vector<std::uint64_t>& hashes = *input.hashes;
      for (std::uint64_t nb : {std::uint64_t{40001}, std::uint64_t{3}}) {
        for (unsigned workers : {2u, 3u, 5u}) {
          const unsigned used = static_cast<unsigned>(std::min<std::uint64_t>(workers, nb));
          for (const Exchange& x : exchanges) {
            const std::string what = std::string(name) + " " + input.what + " nb " + std::to_string(nb) + " workers " +
                                     std::to_string(workers) + " capacity " + std::to_string(x.capacity) + " held " +
                                     std::to_string(x.held) + " ahead " + std::to_string(x.max_ahead);
            std::mutex mutex;
            std::map<std::thread::id, std::vector<std::uint64_t>> inserted;
            // Per thread, the hashes its last insertion carried ahead, to be the first it inserts next.
            std::map<std::thread::id, std::vector<std::uint64_t>> promised;
            std::map<std::thread::id, std::size_t> full_aheads;  // insertions that carried max_ahead
            bool ahead_ok = true;
            std::string first_error;
            for_each_exchanged_hash_chunk(
                *kernel, input.keys->batch(), HashSpec{}, workers, nb,
                [&](const std::uint64_t* h, std::size_t n, BloomLookahead around) {
                  std::lock_guard lock(mutex);
                  const std::thread::id me = std::this_thread::get_id();
                  auto& owed = promised[me];
                  const std::size_t ahead = around.ahead;
                  // primed may exceed n (pieces shorter than the hashes ahead): h[0, n + ahead) are there to compare.
                  const bool kept = owed.size() <= n + ahead && std::equal(owed.begin(), owed.end(), h);
                  if ((!kept || around.primed != owed.size() || (ahead != 0 && ahead != x.max_ahead)) && ahead_ok) {
                    ahead_ok = false;
                    first_error = !kept ? "did not start with the " + std::to_string(owed.size()) + " carried ahead"
                                  : around.primed != owed.size()
                                      ? "said " + std::to_string(around.primed) + " primed after " +
                                            std::to_string(owed.size()) + " carried ahead"
                                      : "carried " + std::to_string(ahead) + " ahead";
                  }
                  if (ahead == x.max_ahead && ahead != 0) ++full_aheads[me];
                  owed.assign(h + n, h + n + ahead);
                  inserted[me].insert(inserted[me].end(), h, h + n);
                },
                x.max_ahead, input.piece, x.capacity, x.held);
            ASSERT_TRUE(ahead_ok) << first_error << "; " << what;
            for (const auto& [thread, owed] : promised) {
              ASSERT_TRUE(owed.empty()) << "the last insertion carried hashes ahead; " << what;
            }
            ASSERT_EQ(inserted.size(), used) << what;
            if (x.max_ahead != 0) {
              for (const auto& [thread, mine] : inserted) {
                EXPECT_GT(full_aheads[thread], 0u) << "a thread inserted " << mine.size() << " hashes, none with "
                                                   << x.max_ahead << " ahead; " << what;
              }
            }
            std::vector<std::uint64_t> all;
            std::vector<bool> owner_seen(used, false);
            for (const auto& [thread, mine] : inserted) {
              const std::uint64_t owner = layout::block_index(mine.front(), nb) * used / nb;
              EXPECT_FALSE(owner_seen[owner]) << "two threads inserted worker " << owner << "'s hashes; " << what;
              owner_seen[owner] = true;
              for (std::uint64_t h : mine) ASSERT_EQ(layout::block_index(h, nb) * used / nb, owner) << what;
              all.insert(all.end(), mine.begin(), mine.end());
            }
            std::sort(all.begin(), all.end());
            std::vector<std::uint64_t> want = hashes;
            std::sort(want.begin(), want.end());
            EXPECT_EQ(all, want) << what;
          }
        }
      }
    }
  }
}

// The prefetch distance at the edges of its size classes, and the drivers
// carry exactly that many hashes ahead: none in cache, the near distance in
// the L3's sizes, the far one from 8 MiB (kernels.hpp). From 8 MiB the
// blocks go into L1 kBloomL1PrefetchKeysAhead ahead, into L2 before that;
// below, into L1 the whole distance ahead.
TEST(HashChunks, HashesAheadFollowTheFilterSize) {
  constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
  constexpr std::size_t kNear = kBloomNearPrefetchKeysAhead, kFar = kBloomPrefetchKeysAhead;
  constexpr std::size_t kL1 = kBloomL1PrefetchKeysAhead;
  struct Case {
    std::uint64_t bytes;
    std::size_t ahead, l1;
  };
  const Case cases[] = {{0, 0, 0},
                        {kMiB - 1, 0, 0},
                        {kMiB, kNear, kNear},
                        {8 * kMiB - 1, kNear, kNear},
                        {8 * kMiB, kFar, kL1},
                        {std::uint64_t{1} << 40, kFar, kL1}};
  EXPECT_LT(kBloomNearPrefetchKeysAhead, kBloomPrefetchKeysAhead);
  EXPECT_LT(kBloomL1PrefetchKeysAhead, kBloomPrefetchKeysAhead);
  for (const auto& [bytes, ahead, l1] : cases) {
    EXPECT_EQ(bloom_prefetch_keys_ahead(bytes), ahead) << bytes << " bytes";
    EXPECT_EQ(bloom_l1_prefetch_keys_ahead(bytes), l1) << bytes << " bytes";
    for (KeyKind kind : {KeyKind::U64, KeyKind::Offsets32, KeyKind::Prehashed}) {
      EXPECT_EQ(bloom_chunks(bytes, kind).ahead, ahead) << bytes << " bytes, kind " << int(kind);
    }
  }
}

// for_each_hash_chunk hands every key's hash exactly once, in key order within
// each piece a worker takes, and after each chunk the hashes of as many of the
// piece's next keys as it may carry ahead (all it has, up to max_ahead), and
// says that each chunk starts with those the chunk before carried: for
// hashed and pre-hashed keys, chunks of one key up to kHashChunk, one and two
// workers.
TEST(HashChunks, EachKeyOnceAndTheNextKeysAhead) {
  std::vector<std::uint64_t> raw(4 * kMinPieceKeys + 5003);  // several pieces a worker
  std::mt19937_64 rng(20261202);
  for (auto& k : raw) k = rng();
  const Keys hashed{std::span<const std::uint64_t>(raw)};
  std::vector<std::uint64_t> want(raw.size());
  scalar_kernels().hash(hashed.batch(), 0, raw.size(), HashSpec{}, want.data());
  const Keys prehashed{Prehashed{want}};
  for (const Keys* keys : {&hashed, &prehashed}) {
    for (unsigned workers : {1u, 2u}) {
      for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, std::size_t{256}, kHashChunk}) {
        for (std::size_t max_ahead : {std::size_t{0}, std::size_t{1}, std::size_t{5}, kBloomPrefetchKeysAhead}) {
          const std::string what = std::string(keys == &hashed ? "u64" : "prehashed") + " workers " +
                                   std::to_string(workers) + " chunk " + std::to_string(chunk) + " ahead " +
                                   std::to_string(max_ahead);
          struct Chunk {
            std::size_t first, count, primed, ahead;
          };
          std::mutex mutex;
          std::map<unsigned, std::vector<Chunk>> chunks;  // by worker, in the order handed
          bool hashes_ok = true;
          std::string first_error;
          for_each_hash_chunk(
              scalar_kernels(), keys->batch(), HashSpec{}, workers,
              [&](unsigned w, std::size_t first, const std::uint64_t* h, std::size_t count, BloomLookahead around) {
                std::lock_guard lock(mutex);
                chunks[w].push_back({first, count, around.primed, around.ahead});
                for (std::size_t i = 0; i < count + around.ahead && first + i < raw.size(); ++i) {
                  if (h[i] != want[first + i] && hashes_ok) {
                    hashes_ok = false;
                    first_error = "wrong hash " + std::to_string(i) + " of the chunk at key " + std::to_string(first);
                  }
                }
              },
              chunk, max_ahead);
          ASSERT_TRUE(hashes_ok) << first_error << "; " << what;
          // A worker's chunks come piece after piece (for_each_worker_share): a piece starts at a multiple of
          // the piece size with nothing primed, and its chunks follow one another to its end.
          const std::size_t piece = workers <= 1 ? raw.size() : piece_keys(raw.size(), workers);
          std::vector<int> seen(raw.size(), 0);
          for (const auto& [w, mine] : chunks) {
            std::size_t expect_first = 0;
            std::size_t expect_primed = 0;  // the chunk before's ahead
            std::size_t piece_end = 0;
            for (const Chunk& c : mine) {
              if (c.first >= piece_end) {  // the next piece this worker took
                ASSERT_EQ(c.first % piece, 0u) << "worker " << w << "; " << what;
                expect_first = c.first;
                expect_primed = 0;
                piece_end = std::min(raw.size(), c.first + piece);
              }
              ASSERT_EQ(c.first, expect_first) << "worker " << w << "; " << what;
              ASSERT_EQ(c.primed, expect_primed) << "chunk at key " << c.first << "; " << what;
              expect_primed = c.ahead;
              ASSERT_TRUE(c.count >= 1 && c.count <= chunk) << c.count << "; " << what;
              ASSERT_EQ(c.ahead, std::min(max_ahead, piece_end - c.first - c.count))
                  << "chunk at key " << c.first << "; " << what;
              for (std::size_t i = c.first; i < c.first + c.count; ++i) ++seen[i];
              expect_first = c.first + c.count;
            }
          }
          for (std::size_t i = 0; i < raw.size(); ++i) ASSERT_EQ(seen[i], 1) << "key " << i << "; " << what;
        }
      }
    }
  }
}

// The private copies' buffers outlive the call that took them: the next call
// gets the same memory, up to the limit (one a core less one) of them, and
// more are allocated when a call needs them.
// (Their reuse with an earlier call's bits in them is what MultiThreadedAdd
// below runs into at every thread count after the first.)
// The batch check finds fixed-width keys (KeyBatch::fixed_width), which the
// kernels then take instead of scanning each chunk's offsets: 8 or 16 bytes
// throughout, and not if one string is a byte longer anywhere (at either
// side of each worker's piece of a large batch, or at its ends), if each
// worker's piece has one width but not the same, or for other widths.
template <class Offset>
void check_fixed_width_found(std::size_t n) {
  const auto width_of = [](const std::vector<Offset>& off, const std::vector<std::uint8_t>& data) {
    return Keys(StringBatch<Offset>{off, data}).batch().fixed_width;
  };
  std::vector<std::uint8_t> data(16 * n + 1, 'x');
  std::vector<Offset> off(n + 1);
  for (std::size_t width : {8, 16, 12, 0}) {
    for (std::size_t i = 0; i <= n; ++i) off[i] = static_cast<Offset>(width * i);
    EXPECT_EQ(width_of(off, data), width == 8 || width == 16 ? width : 0) << "width " << width << " n " << n;
  }
  // 16 throughout, then one string a byte longer (and the next one shorter,
  // or past the end, the data one byte longer).
  for (std::size_t i = 0; i <= n; ++i) off[i] = static_cast<Offset>(16 * i);
  const std::size_t piece = piece_keys(off.size(), workers_for(off.size()));
  std::vector<std::size_t> places{1, n};
  for (std::size_t first = piece; first < off.size(); first += piece) places.insert(places.end(), {first - 1, first});
  for (std::size_t at : places) {
    off[at] += 1;
    EXPECT_EQ(width_of(off, data), 0) << "offsets[" << at << "] one more, n " << n;
    off[at] -= 1;
  }
  ASSERT_EQ(width_of(off, data), 16);
  // The first half 8 and the rest 16 (each worker's pieces of one width but
  // the one in the middle).
  if (n < 2) return;
  for (std::size_t i = 0; i <= n; ++i) off[i] = static_cast<Offset>(i <= n / 2 ? 8 * i : 8 * (n / 2) + 16 * (i - n / 2));
  EXPECT_EQ(width_of(off, data), 0) << "halves of 8 and 16, n " << n;
}

// for_each_key_chunk hands every key once, in chunks of the size asked
// (clamped to kMaxKeyChunk; a piece's last may be shorter), each piece's chunks one after another, each with
// scratch room for the whole chunk (filled here: AddressSanitizer's run sees
// a buffer short of it); one and two workers.
TEST(KeyChunks, EachKeyOnceInChunksWithScratchForThem) {
  const std::size_t n = 4 * kMinPieceKeys + 5003;  // several pieces a worker
  for (unsigned workers : {1u, 2u}) {
    for (std::size_t chunk : {std::size_t{1}, std::size_t{7}, kHashChunk, kFusedLoopChunk, kMaxKeyChunk + 5}) {
      const std::string what = "workers " + std::to_string(workers) + " chunk " + std::to_string(chunk);
      std::mutex mutex;
      std::map<unsigned, std::vector<std::pair<std::size_t, std::size_t>>> chunks;  // by worker: first, count
      for_each_key_chunk(
          n, workers,
          [&](unsigned w, std::size_t first, std::size_t count, std::uint64_t* buf) {
            std::fill_n(buf, count, first);
            std::lock_guard lock(mutex);
            chunks[w].emplace_back(first, count);
          },
          chunk);
      const std::size_t most = std::min(chunk, kMaxKeyChunk);
      const std::size_t piece = workers <= 1 ? n : piece_keys(n, workers);
      std::vector<int> seen(n, 0);
      for (const auto& [w, mine] : chunks) {
        std::size_t expect_first = 0;
        for (const auto& [first, count] : mine) {
          if (first % piece == 0) expect_first = first;  // the next piece this worker took
          ASSERT_EQ(first, expect_first) << "worker " << w << "; " << what;
          const std::size_t piece_end = std::min(n, first / piece * piece + piece);
          ASSERT_TRUE(first + count <= piece_end) << "past its piece; " << what;
          // Every chunk but a piece's last has the size asked, so that the loops get as many keys a call.
          ASSERT_EQ(count, first + count == piece_end ? std::min(most, count) : most) << what;
          ASSERT_GE(count, 1u) << what;
          for (std::size_t i = first; i < first + count; ++i) ++seen[i];
          expect_first = first + count;
        }
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<std::ptrdiff_t>(n)) << what;
    }
  }
}

TEST(KeysCheck, FindsFixedWidthStrings) {
  for (unsigned threads : {1u, 4u}) {
    set_threads(threads);
    for (std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{300}, std::size_t{1} << 17}) {
      SCOPED_TRACE("threads " + std::to_string(threads));
      check_fixed_width_found<std::int32_t>(n);
      check_fixed_width_found<std::int64_t>(n);
    }
  }
  set_threads(0);
}

TEST(CopyBuffers, KeptForTheNextCall) {
  free_kept_copy_buffers_for_testing();
  const unsigned n = kept_copy_buffers_limit();
  ASSERT_GE(n, 1u);
  std::vector<std::uint8_t*> a = take_copy_buffers(n + 1);
  ASSERT_EQ(a.size(), n + 1);
  for (std::uint8_t* p : a) {
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u);
    p[0] = 1;  // each is kPrivateCopyMaxBytes long
    p[kPrivateCopyMaxBytes - 1] = 2;
  }
  EXPECT_EQ(std::set<std::uint8_t*>(a.begin(), a.end()).size(), n + 1);
  // n + 1 given back: the first n kept (the limit), the last freed.
  const std::set<std::uint8_t*> kept(a.begin(), a.begin() + n);
  return_copy_buffers(a);
  EXPECT_TRUE(a.empty());
  std::vector<std::uint8_t*> b = take_copy_buffers(n);
  EXPECT_EQ(std::set<std::uint8_t*>(b.begin(), b.end()), kept);
  std::vector<std::uint8_t*> c = take_copy_buffers(1);  // none kept now: a new one
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(kept.count(c[0]), 0u);
  return_copy_buffers(b);
  return_copy_buffers(c);  // past the limit: freed
  std::vector<std::uint8_t*> d = take_copy_buffers(n);
  EXPECT_EQ(std::set<std::uint8_t*>(d.begin(), d.end()), kept);
  return_copy_buffers(d);
  free_kept_copy_buffers_for_testing();
}

// Every multi-threaded add path (private copies; two workers each going
// through the whole batch for the keys of their blocks, where the backend
// has the loop for it: u64 keys and 16-byte strings past the cache; workers
// handing each other the hashes of their blocks, two of them or more) builds
// the 1-thread filter, for every key kind that hashes differently.
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
  std::vector<std::int64_t> offsets16(keys.size() + 1);
  std::vector<std::uint8_t> data16(16 * keys.size());
  for (std::size_t i = 0; i <= keys.size(); ++i) offsets16[i] = static_cast<std::int64_t>(16 * i);
  for (std::size_t i = 0; i < data16.size(); ++i) {
    data16[i] = static_cast<std::uint8_t>((keys[i / 16] >> (8 * (i % 8))) ^ i);
  }
  const std::vector<Keys> batches{Keys(keys), Keys(Prehashed{keys}), Keys(StringBatch<std::int32_t>{offsets, data}),
                                  Keys(StringBatch<std::int64_t>{offsets16, data16})};
  // 1001 blocks: private copies; 40000 (2.4 MiB) and 2^18 (16 MiB of cacheline512, whose blocks the kernels
  // prefetch in two levels): shared, divided by block. An odd count leaves a parquet_sbbf filter 32 bytes past
  // a multiple of 64, so that a private copy sized to whole 64-byte lines rounded down is written past its end
  // (AddressSanitizer's run sees it; threads past the cores take copies of their own).
  for (std::uint64_t nb : {std::uint64_t{1001}, std::uint64_t{40000}, std::uint64_t{1} << 18}) {
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

// A multi-threaded HLL add: workers 1.. fill private registers from a
// snapshot of the sketch at their first keys, merged by max by the workers
// (one range of the registers each). Into an empty and a warm sketch, p = 4
// (one range), 14 and 18, 2 to 8 threads: the one-thread registers. With the
// pool's threads late (they claim nothing), the calling thread adds every key
// and merges no copy that no worker made: the kept buffers it takes are
// poisoned first, so that one merged would show.
TEST(MultiThreadedHllAdd, PrivateRegistersMergeToTheOneThreadSketch) {
  std::vector<std::uint64_t> keys(300000), more(70000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i * 0x9E3779B97F4A7C15ULL;
  for (std::size_t i = 0; i < more.size(); ++i) more[i] = ~keys[i];
  for (std::uint32_t p : {4u, 14u, 18u}) {
    set_threads(1);
    HyperLogLog want(p);
    want.add(Keys(keys));
    HyperLogLog want_warm = want;
    want_warm.add(Keys(more));
    for (unsigned threads : {2u, 3u, 8u}) {
      set_threads(threads);
      HyperLogLog got(p);
      got.add(Keys(keys));
      EXPECT_TRUE(std::ranges::equal(got.registers(), want.registers())) << "p " << p << " threads " << threads;
      got.add(Keys(more));
      EXPECT_TRUE(std::ranges::equal(got.registers(), want_warm.registers()))
          << "warm, p " << p << " threads " << threads;
    }
  }
  set_threads(1);
  HyperLogLog want(14), got(14);
  want.add(Keys(keys));
  std::vector<std::uint8_t*> poisoned = take_copy_buffers(kept_copy_buffers_limit());
  for (std::uint8_t* b : poisoned) std::memset(b, 0xFF, kPrivateCopyMaxBytes);
  return_copy_buffers(poisoned);
  set_threads(4);
  delay_pool_claims_for_testing(std::chrono::seconds(2));
  got.add(Keys(keys));
  delay_pool_claims_for_testing(std::chrono::seconds(0));
  EXPECT_TRUE(std::ranges::equal(got.registers(), want.registers())) << "pool threads late";
  set_threads(0);
}

// A child of fork() inherits the pool's bookkeeping but none of its threads:
// its first add into a large filter (whose workers share the filter and wait
// for each other) waited for ever on a worker that did not exist. The child
// now makes a pool of its own. (Not under ThreadSanitizer, which refuses
// threads after a multi-threaded fork.)
TEST(ForkedChild, BulkCallsRunOnAPoolOfItsOwn) {
  set_threads(2);
  std::vector<std::uint64_t> keys(std::size_t{1} << 18);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i * 0x9e3779b97f4a7c15ULL;
  BloomFilter before_fork(std::uint64_t{1} << 16, 6);  // 4 MiB: shared by the workers
  before_fork.add(keys);                               // the pool starts its thread
  HyperLogLog sketch(14);
  sketch.add(keys);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(20);  // a hang ends the child with SIGALRM
    BloomFilter f(std::uint64_t{1} << 16, 6);
    f.add(keys);
    HyperLogLog h(14);
    h.add(keys);
    _exit(f == before_fork && h == sketch ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child ended by signal " << WTERMSIG(status) << " (SIGALRM: it hung)";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's filter or sketch differs from the parent's";
}

}  // namespace
}  // namespace probkit::detail
