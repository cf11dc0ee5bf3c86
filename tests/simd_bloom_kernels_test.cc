// Each SIMD target's Bloom filter kernels against the scalar reference: add
// and contains for both layouts and every k (AVX-512 adds with each way of
// building its masks), chained calls, the largest block count, the hash-and-
// test loop (bloom_contains_keys) and the block owners' split of hashes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "probkit/bloom_filter.hpp"
#include "probkit/detail/kernels.hpp"
#include "simd_kernels.hpp"

namespace probkit::detail::simd_test {
namespace {

struct Filter {
  std::vector<std::uint32_t> words;
  BloomRef ref;
  Filter(std::uint64_t nb, std::uint32_t k, BloomLayout layout)
      : words(nb * layout::block_words(layout)), ref{words.data(), nb, k, layout} {}
};

// Random hashes whose blocks and bits cover the filter, plus a second run of the
// same hashes so that "already set" paths are taken too.
std::vector<std::uint64_t> hashes_for(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint64_t> h = random_u64(rng, n);
  for (std::size_t i = n / 2; i < n; ++i) h[i] = h[i - n / 2];
  return h;
}

TEST_F(SimdKernels, BloomMatchesScalar) {
  // 2^15 and 2^20 blocks: the kernels' near and far prefetch distances (kernels.hpp).
  const std::uint64_t block_counts[] = {1, 3, 1000, std::uint64_t{1} << 15, std::uint64_t{1} << 20};
  for_each_target_and_vendor_forms(kAddMasksTargets, [&](const SimdTarget* t) {
    SCOPED_TRACE(t->name);
    std::printf("checking target %s (AVX-512 add masks: %s)\n", t->name, cpu::add_masks_name(cpu::avx512_add_masks()));
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint64_t nb : block_counts) {
        const std::uint32_t k_max =
            layout == BloomLayout::Cacheline512 ? layout::kMaxCachelineK : 1;
        for (std::uint32_t k = 1; k <= k_max; ++k) {
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          // Large filters get few k values: the kernels' loops do not depend on nb.
          if (nb > 1000 && kk != 7 && kk != 8 && kk != 16) continue;
          const std::size_t n = nb > 1000 ? 100000 : 3 + (k * 37 + nb) % 68;
          const std::vector<std::uint64_t> h = hashes_for(rng_, n + 1);
          const std::size_t off = (k + nb) % 2;  // unaligned hash pointer
          Filter want(nb, kk, layout), got(nb, kk, layout);
          // Add the first half, query all (half present, half mostly absent).
          // The kernel under test is shown the rest as hashes ahead, which it
          // may prefetch and must not add.
          scalar_kernels().bloom_add(want.ref, h.data() + off, n / 2, {});
          t->kernels->bloom_add(got.ref, h.data() + off, n / 2, {.primed = 0, .ahead = n - n / 2});
          ASSERT_EQ(want.words, got.words) << "add: nb " << nb << " k " << kk << " n " << n;
          std::vector<std::uint64_t> queries = random_u64(rng_, n);
          for (std::size_t i = 0; i < n / 2; ++i) queries[2 * i] = h[off + i];
          Misaligned<std::uint8_t> out_want(n, 0), out_got(n, 1 + k % 7);
          const std::uint64_t hits_want =
              scalar_kernels().bloom_contains(want.ref, queries.data(), n, {}, out_want.data());
          const std::uint64_t hits_got = t->kernels->bloom_contains(got.ref, queries.data(), n, {}, out_got.data());
          ASSERT_EQ(hits_want, hits_got) << "contains: nb " << nb << " k " << kk;
          ASSERT_EQ(0, std::memcmp(out_want.data(), out_got.data(), n));
          ASSERT_EQ(hits_want, t->kernels->bloom_contains(got.ref, queries.data(), n, {}, nullptr));
          // Again in two calls, the first with the second's queries ahead:
          // it answers only its own, and the second starts primed by it.
          Misaligned<std::uint8_t> out_split(n, k % 5);
          constexpr std::uint8_t kUntouched = 0xA5;
          std::fill_n(out_split.data(), n, kUntouched);
          const std::size_t first = n / 3;
          std::uint64_t hits_split =
              t->kernels->bloom_contains(got.ref, queries.data(), first, {.ahead = n - first}, out_split.data());
          for (std::size_t i = first; i < n; ++i) ASSERT_EQ(kUntouched, out_split.data()[i]) << i;
          hits_split += t->kernels->bloom_contains(got.ref, queries.data() + first, n - first,
                                                   {.primed = n - first, .ahead = 0}, out_split.data() + first);
          ASSERT_EQ(hits_want, hits_split) << "contains in two calls: nb " << nb << " k " << kk;
          ASSERT_EQ(0, std::memcmp(out_want.data(), out_split.data(), n));
          // Then the rest, primed by the first add: adds onto a partly filled filter.
          scalar_kernels().bloom_add(want.ref, h.data() + off + n / 2, n - n / 2, {});
          t->kernels->bloom_add(got.ref, h.data() + off + n / 2, n - n / 2, {.primed = n - n / 2, .ahead = 0});
          ASSERT_EQ(want.words, got.words) << "add 2: nb " << nb << " k " << kk;
        }
      }
    }
  });
}

// Filters filled until about half of random queries answer yes, so that
// each answer turns on every probe: a test that skipped a probe, or read the
// wrong word or bit for one, answers yes where the reference says no. (In
// the sparser filters above nearly every absent key misses on its first
// probes, and such a test would pass.) The queries are u64 keys, asked as
// their hashes and, where a target hashes and tests in one loop
// (bloom_contains_keys), as keys.
TEST_F(SimdKernels, BloomMatchesScalarHalfFull) {
  constexpr std::size_t kQueries = 4000;
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      const std::uint32_t k_max = layout == BloomLayout::Cacheline512 ? layout::kMaxCachelineK : 1;
      for (std::uint64_t nb : {1, 3, 64}) {
        for (std::uint32_t k = 1; k <= k_max; ++k) {
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          // A query answers yes with probability fill^kk: fill = 2^(-1/kk).
          // cacheline512: each probe sets one of 512 bits, kk probes a key;
          // parquet_sbbf: one of 32 bits in each word, one probe a word.
          const double fill = std::pow(0.5, 1.0 / kk);
          const double bits = layout == BloomLayout::Cacheline512 ? 512.0 : 32.0;
          const double probes_per_key = layout == BloomLayout::Cacheline512 ? kk : 1.0;
          const auto n =
              static_cast<std::size_t>(std::ceil(static_cast<double>(nb) * bits * -std::log1p(-fill) / probes_per_key));
          const std::vector<std::uint64_t> h = random_u64(rng_, n);
          Filter f(nb, kk, layout);
          scalar_kernels().bloom_add(f.ref, h.data(), n, {});
          const std::vector<std::uint64_t> keys = random_u64(rng_, kQueries);
          KeyBatch kb;
          kb.kind = KeyKind::U64;
          kb.n = kQueries;
          kb.keys = keys.data();
          std::vector<std::uint64_t> queries(kQueries);
          scalar_kernels().hash(kb, 0, kQueries, HashSpec{}, queries.data());
          std::vector<std::uint8_t> want(kQueries), got(kQueries, 2);
          const std::uint64_t hits = scalar_kernels().bloom_contains(f.ref, queries.data(), kQueries, {}, want.data());
          ASSERT_GT(hits, kQueries / 4) << "nb " << nb << " k " << kk << ": not full enough to test";
          ASSERT_LT(hits, kQueries * 3 / 4) << "nb " << nb << " k " << kk << ": too full to test";
          ASSERT_EQ(hits, t->kernels->bloom_contains(f.ref, queries.data(), kQueries, {}, got.data()))
              << "nb " << nb << " k " << kk;
          ASSERT_EQ(want, got) << "nb " << nb << " k " << kk;
          if (t->kernels->bloom_contains_keys == nullptr) continue;
          std::vector<std::uint64_t> scratch(kQueries);
          std::vector<std::uint8_t> got_keys(kQueries, 2);
          std::uint64_t hits_keys = 0;
          if (!t->kernels->bloom_contains_keys(f.ref, kb, 0, kQueries, HashSpec{}, scratch.data(), got_keys.data(),
                                               &hits_keys)) {
            continue;  // declined (BloomContainsKeysMatchesHashThenContains says where)
          }
          ASSERT_EQ(hits, hits_keys) << "keys: nb " << nb << " k " << kk;
          ASSERT_EQ(want, got_keys) << "keys: nb " << nb << " k " << kk;
        }
      }
    }
  }
}

// Calls of any size chained as the drivers chain them: each says primed the
// hashes the call before carried ahead, so that calls shorter than the
// prefetch distance, than a step of eight keys, or than the keys primed, and
// primed counts below and above the distance, all run (results must match
// the reference; lost prefetches would only be slower). 2^12 blocks: no
// prefetching (cacheline512: the AVX-512 add's masks from either source);
// 2^15: the near prefetch distance for both layouts; 2^19: the far one.
TEST_F(SimdKernels, BloomChainedCallsMatchScalar) {
  const std::size_t sizes[] = {5, 20, 3, 77, 1, 8, 256, 13, 40, 7, 130, 2, 96, 9, 300, 4};
  std::size_t total = 0;
  for (std::size_t c : sizes) total += c;
  const std::vector<std::uint64_t> h = hashes_for(rng_, total);
  std::vector<std::uint64_t> queries = random_u64(rng_, total);
  for (std::size_t i = 0; i < total; i += 2) queries[i] = h[(i * 7) % total];
  for_each_target_and_vendor_forms(kAddMasksTargets, [&](const SimdTarget* t) {
    SCOPED_TRACE(t->name);
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint64_t nb : {std::uint64_t{1} << 12, std::uint64_t{1} << 15, std::uint64_t{1} << 19}) {
        const std::uint64_t bytes = nb * layout::block_bytes(layout);
        for (std::uint32_t k : {6u, 16u}) {
          if (layout == BloomLayout::ParquetSbbf && k != 6) continue;
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          Filter want(nb, kk, layout), got(nb, kk, layout);
          scalar_kernels().bloom_add(want.ref, h.data(), total, {});
          std::vector<std::uint8_t> out_want(total);
          const std::uint64_t hits_want =
              scalar_kernels().bloom_contains(want.ref, queries.data(), total, {}, out_want.data());
          for (std::size_t max_ahead : {bloom_prefetch_keys_ahead(bytes), std::size_t{3}, std::size_t{40}}) {
            const std::string what =
                "nb " + std::to_string(nb) + " k " + std::to_string(kk) + " ahead " + std::to_string(max_ahead);
            std::fill(got.words.begin(), got.words.end(), 0u);
            Misaligned<std::uint8_t> out_got(total, 3);
            std::uint64_t hits_got = 0;
            for (bool add : {true, false}) {
              std::size_t first = 0, primed = 0;
              for (std::size_t c : sizes) {
                const BloomLookahead around{primed, std::min(max_ahead, total - first - c)};
                if (add) {
                  t->kernels->bloom_add(got.ref, h.data() + first, c, around);
                } else {
                  hits_got +=
                      t->kernels->bloom_contains(got.ref, queries.data() + first, c, around, out_got.data() + first);
                }
                primed = around.ahead;
                first += c;
              }
            }
            ASSERT_EQ(want.words, got.words) << "add: " << what;
            ASSERT_EQ(hits_want, hits_got) << "contains: " << what;
            ASSERT_EQ(0, std::memcmp(out_want.data(), out_got.data(), total)) << "contains: " << what;
          }
        }
      }
    }
  });
}

// The largest block count, 2^32 - 1: block_index's 32x32-bit product then
// uses all 64 bits. Hashes whose top 32 bits are at most 64 address only
// blocks 0..63, so a 64-block buffer stands in for the 256 GiB filter.
TEST_F(SimdKernels, BloomLargestBlockCount) {
  constexpr std::uint64_t kBlocks = 0xFFFFFFFFu;
  constexpr std::size_t kReal = 64;  // blocks actually allocated
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint32_t k : {6u, 16u}) {
        const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
        std::vector<std::uint64_t> h = random_u64(rng_, 1000);
        for (std::uint64_t& x : h) x = (x & 0xFFFFFFFFu) | ((x >> 32) % kReal << 32);
        for (std::uint64_t x : h) ASSERT_LT(layout::block_index(x, kBlocks), kReal);
        const std::size_t words = kReal * layout::block_words(layout);
        std::vector<std::uint32_t> want(words), got(words);
        const BloomRef want_ref{want.data(), kBlocks, kk, layout};
        const BloomRef got_ref{got.data(), kBlocks, kk, layout};
        scalar_kernels().bloom_add(want_ref, h.data(), h.size() / 2, {});
        t->kernels->bloom_add(got_ref, h.data(), h.size() / 2, {.ahead = h.size() - h.size() / 2});
        ASSERT_EQ(want, got) << "add, k " << kk;
        std::vector<std::uint8_t> out_want(h.size()), out_got(h.size());
        ASSERT_EQ(scalar_kernels().bloom_contains(want_ref, h.data(), h.size(), {}, out_want.data()),
                  t->kernels->bloom_contains(got_ref, h.data(), h.size(), {}, out_got.data()));
        ASSERT_EQ(out_want, out_got) << "contains, k " << kk;
      }
    }
  }
}

// The key batches bloom_contains_keys is tried on: u64 and u32 keys, and
// strings (both offset widths) all 16 bytes long or mostly 16 (some shorter).
// width16: all 16 bytes, which AVX-512 hashes and tests in one loop (other
// strings it hashes, then tests, in the same call).
struct ContainsKeys {
  KeyKind kind;
  bool width16;
};
constexpr ContainsKeys kContainsKeys[] = {{KeyKind::U64, false},
                                          {KeyKind::U32, false},
                                          {KeyKind::Offsets32, true},
                                          {KeyKind::Offsets64, true},
                                          {KeyKind::Offsets64, false}};

// cacheline512 blocks of the smallest filter the kernels prefetch for in two
// levels (kernels.hpp: kBloomFarPrefetchMinBytes, 8 MiB).
constexpr std::uint64_t kTwoLevelBlocks = kBloomFarPrefetchMinBytes / 64;

// Key counts for a fused loop into a filter that the kernels prefetch for:
// fewer than one step, around the steps' lead (32 keys ahead for one level,
// 96 for two) and past it, whole steps and a tail. For two-level filters, whose
// every pass is slow, those around the lead of two levels, around the second
// prefetch's distance (kBloomL1PrefetchKeysAhead, 16) and the keys between a
// key's two prefetches (80).
const std::vector<std::size_t> kPrefetchedLengths = {0,  1,   7,   8,   9,   13,  31,   32,   33,
                                                     70, 95,  96,  97,  103, 104, 200,  1024, 100003};
const std::vector<std::size_t> kTwoLevelLengths = {0, 9, 16, 17, 80, 81, 95, 96, 97, 104, 200, 1024, 100003};

// bloom_contains_keys answers as `hash` then `bloom_contains` do: key counts
// 0..13 and 70 (the pipeline's fill, drain and tail; for k = 1, 6, 8, 9, 16 at
// 1000 blocks, every count of lengths(); into a filter large enough to
// prefetch for, kPrefetchedLengths), both hashes and a seed, with out and
// without, adding to *hits, writing nothing past count, and taking nothing
// from what the scratch held before. Where it declines (u32 keys; strings but
// on AVX-512 into a filter in the cache, or past it where the batch's check
// found them all 16 bytes long; u64 keys into parquet_sbbf in the cache on
// AVX-512; on AVX2 a filter of either layout large enough to prefetch for)
// it returns false and touches nothing. Present exactly where it was
// measured to pay (bloom_contains_avx2-inl.h, bloom_contains_avx512-inl.h).
TEST_F(SimdKernels, BloomContainsKeysMatchesHashThenContains) {
  const HashSpec specs[] = {HashSpec{}, HashSpec::redis(), {HashKind::Xxh64, 0x5eed}};
  // 2^14 blocks: 1 MiB of cacheline512, the first size the kernels prefetch
  // for; kTwoLevelBlocks (8 MiB), the first they prefetch for in two levels
  // (parquet_sbbf: twice the blocks, the same sizes).
  const std::uint64_t block_counts[] = {1, 1000, std::uint64_t{1} << 14, kTwoLevelBlocks};
  constexpr std::uint8_t kUntouched = 0xA5;
  constexpr std::uint64_t kHitsBefore = 7;
  [[maybe_unused]] bool any = false;
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    ASSERT_EQ(t->kernels->bloom_contains_keys != nullptr, (t->bit & (HWY_AVX2 | HWY_AVX3 | HWY_AVX3_DL)) != 0);
    if (t->kernels->bloom_contains_keys == nullptr) continue;
    const bool avx512 = (t->bit & (HWY_AVX3 | HWY_AVX3_DL)) != 0;
    any = true;
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint64_t cacheline_nb : block_counts) {
        // parquet_sbbf's 32-byte blocks: twice as many for the sizes the kernels prefetch for.
        const bool sbbf = layout == BloomLayout::ParquetSbbf;
        const std::uint64_t nb = sbbf && cacheline_nb > 1000 ? 2 * cacheline_nb : cacheline_nb;
        for (std::uint32_t k = 1; k <= layout::kMaxCachelineK; ++k) {
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          if (layout == BloomLayout::ParquetSbbf && k != 1) continue;
          const bool every_length = nb == 1000 && (kk == 1 || kk == 6 || kk == 8 || kk == 9 || kk == 16);
          // The fused loops' steps differ by k as the in-cache ones do: in two levels two k suffice.
          const bool two_level = cacheline_nb == kTwoLevelBlocks;
          if (two_level && !sbbf && kk != 6 && kk != 16) continue;
          Filter f(nb, kk, layout);
          const std::size_t bytes = nb * layout::block_bytes(layout);
          const bool in_cache = bytes < (std::size_t{1} << 20);  // either layout
          for (ContainsKeys keys : kContainsKeys) {
            const KeyKind kind = keys.kind;
            const bool is_u = kind == KeyKind::U64 || kind == KeyKind::U32;
            // AVX-512 hashes, then tests u64 keys into parquet_sbbf in the cache (bloom_contains_avx512-inl.h);
            // into a filter it prefetches for, it takes u64 keys and a batch of 16-byte strings, either layout.
            const bool can_take = in_cache ? (kind == KeyKind::U64 && !(avx512 && layout == BloomLayout::ParquetSbbf)) ||
                                                 (!is_u && avx512)
                                           : avx512 && (kind == KeyKind::U64 || !is_u);
            for (const HashSpec& spec : specs) {
              if (two_level && spec == specs[2]) continue;  // both hashes, once each
              // Past the cache, only strings all 16 bytes long can be taken at every length.
              const bool long_lengths = !in_cache && can_take && (is_u || keys.width16);
              for (std::size_t n : !long_lengths ? lengths() : two_level ? kTwoLevelLengths : kPrefetchedLengths) {
                if (in_cache && !every_length && n > 13 && n != 70) continue;
                if (!in_cache && !long_lengths && n > 13 && n != 70) continue;
                // Strings whose fixed width the batch's check found, or only scanned: past the cache, the
                // fused loop takes those found all 16 bytes long only (a batch-wide answer).
                const bool marked = in_cache ? n % 2 == 1 : n != 70;
                // Long string batches where they are taken, at one k of each AVX-512 test.
                if (!is_u && n > 70 && !(avx512 && (kk == 6 || kk == 9 || layout == BloomLayout::ParquetSbbf)))
                  continue;
                std::vector<std::uint64_t> src;
                std::optional<StringColumn> strings;
                KeyBatch kb;
                if (is_u) {
                  src = random_u64(rng_, n + 3);
                  kb.kind = kind;
                  kb.n = n + 3;
                  kb.keys = src.data();
                } else {
                  strings.emplace(rng_, n + 3, 16, n % 5,
                                  keys.width16 ? StringColumn::Fixed::All : StringColumn::Fixed::Mostly);
                  kb = strings->batch(kind, marked);  // fixed width found or scanned
                }
                const bool taken = can_take && (is_u || in_cache || kb.fixed_width == 16);
                const std::size_t begin = n % 3;
                std::vector<std::uint64_t> h(n);
                scalar_kernels().hash(kb, begin, n, spec, h.data());
                std::fill(f.words.begin(), f.words.end(), 0u);
                scalar_kernels().bloom_add(f.ref, h.data(), n / 2, {});  // about half the keys answer yes
                std::vector<std::uint8_t> want(n);
                const std::uint64_t hits_want = scalar_kernels().bloom_contains(f.ref, h.data(), n, {}, want.data());
                // Random scratch: a hash read before it is computed reads garbage.
                std::vector<std::uint64_t> scratch = random_u64(rng_, n + 8);
                const std::vector<std::uint64_t> scratch_before = scratch;
                std::vector<std::uint8_t> got(n + 8, kUntouched);
                std::uint64_t hits = kHitsBefore;
                const bool done =
                    t->kernels->bloom_contains_keys(f.ref, kb, begin, n, spec, scratch.data(), got.data(), &hits);
                ASSERT_EQ(done, taken)
                    << "layout " << int(layout) << " nb " << nb << " k " << kk << " kind " << int(kind);
                if (!done) {
                  ASSERT_EQ(hits, kHitsBefore);
                  for (std::uint8_t b : got) ASSERT_EQ(b, kUntouched) << "wrote out while declining";
                  ASSERT_EQ(scratch, scratch_before) << "wrote scratch while declining";
                  continue;
                }
                ASSERT_EQ(hits - kHitsBefore, hits_want) << "nb " << nb << " k " << kk << " n " << n;
                ASSERT_EQ(want, std::vector<std::uint8_t>(got.begin(), got.begin() + static_cast<long>(n)))
                    << "nb " << nb << " k " << kk << " n " << n;
                for (std::size_t i = n; i < got.size(); ++i) ASSERT_EQ(got[i], kUntouched) << "wrote past count";
                hits = 0;
                scratch = random_u64(rng_, n + 8);
                ASSERT_TRUE(t->kernels->bloom_contains_keys(f.ref, kb, begin, n, spec, scratch.data(), nullptr, &hits));
                ASSERT_EQ(hits, hits_want) << "without out: nb " << nb << " k " << kk << " n " << n;
              }
            }
          }
        }
      }
    }
  }
#if HWY_ARCH_X86_64
  if (hwy::SupportedTargets() & (HWY_AVX2 | HWY_AVX3 | HWY_AVX3_DL)) {
    EXPECT_TRUE(any) << "no AVX2 or AVX-512 target was tested";
  }
#endif
  EXPECT_EQ(scalar_kernels().bloom_contains_keys, nullptr) << "the reference hashes, then tests";
}

// Pre-hashed keys and strings: bloom_contains_keys declines them, even for a
// filter it would take u64 keys for, and touches nothing.
TEST_F(SimdKernels, BloomContainsKeysDeclinesOtherKeyKinds) {
  Filter f(4096, 6, BloomLayout::Cacheline512);  // 256 KiB, k = 6
  const std::vector<std::uint64_t> hashes = random_u64(rng_, 100);
  const StringColumn strings(rng_, 100, 16, 0, StringColumn::Fixed::All);
  std::vector<KeyBatch> batches = {strings.batch(KeyKind::Offsets32), strings.batch(KeyKind::Offsets64)};
  KeyBatch prehashed;
  prehashed.kind = KeyKind::Prehashed;
  prehashed.n = hashes.size();
  prehashed.keys = hashes.data();
  batches.push_back(prehashed);
  for (const SimdTarget* t : targets_) {
    if (t->kernels->bloom_contains_keys == nullptr) continue;
    SCOPED_TRACE(t->name);
    const bool avx512 = (t->bit & (HWY_AVX3 | HWY_AVX3_DL)) != 0;
    for (const KeyBatch& kb : batches) {
      if (avx512 && kb.kind != KeyKind::Prehashed) continue;  // taken: BloomContainsKeysMatchesHashThenContains
      std::vector<std::uint64_t> scratch(100, 42);
      std::vector<std::uint8_t> out(100, 0xA5);
      std::uint64_t hits = 7;
      ASSERT_FALSE(t->kernels->bloom_contains_keys(f.ref, kb, 0, 100, HashSpec{}, scratch.data(), out.data(), &hits))
          << "kind " << int(kb.kind);
      ASSERT_EQ(hits, 7u);
      ASSERT_EQ(scratch, std::vector<std::uint64_t>(100, 42));
      ASSERT_EQ(out, std::vector<std::uint8_t>(100, 0xA5));
    }
  }
}

// bloom_add_keys sets the bits `hash` then `bloom_add` set, into a filter
// already holding other keys: key counts 0..70 (fewer than one step, the
// steps' hash lookahead running past the last step, the tail) and, for k = 1,
// 6, 8, 9, 16 at 1000 blocks, every count of lengths(); both hashes and a
// seed; u64 keys and strings (16 bytes each, 8 each, and a mix: the strings
// of a call all 16 bytes long take the fused loop, others are hashed, then
// added); u64 keys and a batch of 16-byte strings into a filter of either
// layout large enough to prefetch for, kPrefetchedLengths; keys from begin =
// n % 3; scratch random before. Where it declines (u32 and pre-hashed keys;
// parquet_sbbf in the cache; other strings into a filter large enough to
// prefetch for, those of 16 bytes that the batch's check did not mark
// included) it returns false and touches nothing. Present exactly where it
// was measured to pay: AVX-512, with either mask source (cpu/bloom_add-inl.h);
// each AVX-512 target runs with both.
TEST_F(SimdKernels, BloomAddKeysMatchesHashThenAdd) {
  const HashSpec specs[] = {HashSpec{}, HashSpec::redis(), {HashKind::Xxh64, 0x5eed}};
  // 2^14 blocks: 1 MiB of cacheline512, the first size the kernels prefetch
  // for; kTwoLevelBlocks (8 MiB), the first they prefetch for in two levels.
  const std::uint64_t block_counts[] = {1, 1000, std::uint64_t{1} << 14, kTwoLevelBlocks};
  // Strings: 16 bytes each (the fused loop), 8 bytes each, and mostly 16 with others among them (hashed, then
  // added, in the same call); both offset widths.
  struct Kind {
    KeyKind kind;
    std::size_t string_len;
    StringColumn::Fixed fixed;
  };
  const Kind kinds[] = {{KeyKind::U64, 0, {}},
                        {KeyKind::U32, 0, {}},
                        {KeyKind::Prehashed, 0, {}},
                        {KeyKind::Offsets64, 16, StringColumn::Fixed::All},
                        {KeyKind::Offsets32, 16, StringColumn::Fixed::All},
                        {KeyKind::Offsets32, 8, StringColumn::Fixed::All},
                        {KeyKind::Offsets64, 16, StringColumn::Fixed::Mostly}};
  [[maybe_unused]] bool any = false;
  for_each_target_and_vendor_forms(kAddMasksTargets, [&](const SimdTarget* t) {
    SCOPED_TRACE(t->name);
    const bool avx512 = (t->bit & (HWY_AVX3 | HWY_AVX3_DL)) != 0;
    ASSERT_EQ(t->kernels->bloom_add_keys != nullptr, avx512);
    if (!avx512) return;
    any = true;
    const bool table = cpu::avx512_add_masks() == cpu::AddMasks::kBitTable;
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint64_t cacheline_nb : block_counts) {
        // parquet_sbbf's 32-byte blocks: twice as many for the sizes the kernels prefetch for.
        const bool sbbf = layout == BloomLayout::ParquetSbbf;
        const std::uint64_t nb = sbbf && cacheline_nb > 1000 ? 2 * cacheline_nb : cacheline_nb;
        for (std::uint32_t k = 1; k <= layout::kMaxCachelineK; ++k) {
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          if (layout == BloomLayout::ParquetSbbf && k != 1) continue;
          const std::size_t bytes = nb * layout::block_bytes(layout);
          const bool large = bytes >= (std::size_t{1} << 20);  // the kernels prefetch for it
          const bool two_level = cacheline_nb == kTwoLevelBlocks;
          if (large && layout == BloomLayout::Cacheline512) {
            // Its loop takes no table masks (masks_from_table): one mask source suffices; in two levels, two k.
            if (table || (kk != 1 && kk != 6 && kk != 9 && kk != 16)) continue;
            if (two_level && kk != 6 && kk != 16) continue;
          }
          if (large && sbbf && table) continue;  // no masks at all: one mask source suffices
          const bool every_length = nb == 1000 && (kk == 1 || kk == 6 || kk == 8 || kk == 9 || kk == 16);
          Filter want(nb, kk, layout), got(nb, kk, layout);
          for (const auto& [kind, string_len, fixed] : kinds) {
            const bool strings = string_len != 0;
            // Past the cache: u64 keys, and strings whose batch's check found them all 16 bytes long.
            const bool can_take = (layout == BloomLayout::Cacheline512 || large) && (kind == KeyKind::U64 || strings);
            const bool long_lengths =
                large && can_take && (!strings || (string_len == 16 && fixed == StringColumn::Fixed::All));
            // Declined at any k: one k suffices.
            if (large && !long_lengths && kk != 6 && layout == BloomLayout::Cacheline512) continue;
            for (const HashSpec& spec : specs) {
              if (two_level && spec == specs[2]) continue;  // both hashes, once each
              for (std::size_t n : !long_lengths ? lengths() : two_level ? kTwoLevelLengths : kPrefetchedLengths) {
                if (!large && (!every_length || !can_take) && n > 70) continue;
                if (large && !long_lengths && n != 5 && n != 70) continue;  // declined whatever the count
                if (large && strings && n > 1024 && kk != 6 && kk != 9) continue;  // long string batches at two k
                // Strings whose fixed width the batch's check found, or only scanned (declined past the cache).
                const bool marked = !large ? n % 2 == 1 : n != 70;
                std::vector<std::uint64_t> src;
                std::optional<StringColumn> column;
                KeyBatch kb;
                if (strings) {
                  column.emplace(rng_, n + 3, string_len, 0, fixed);
                  kb = column->batch(kind, marked);  // fixed width found or scanned
                } else {
                  src = random_u64(rng_, n + 3);
                  kb.kind = kind;
                  kb.n = n + 3;
                  kb.keys = src.data();
                }
                const bool taken = can_take && (!large || !strings || kb.fixed_width == 16);
                const std::size_t begin = n % 3;
                const std::vector<std::uint64_t> before = random_u64(rng_, 40);  // keys added earlier
                std::fill(want.words.begin(), want.words.end(), 0u);
                scalar_kernels().bloom_add(want.ref, before.data(), before.size(), {});
                got.words = want.words;
                std::vector<std::uint64_t> h(n);
                scalar_kernels().hash(kb, begin, n, spec, h.data());
                // Random scratch: a hash read before it is computed reads garbage.
                std::vector<std::uint64_t> scratch = random_u64(rng_, n + 8);
                const std::vector<std::uint64_t> scratch_before = scratch;
                const bool done = t->kernels->bloom_add_keys(got.ref, kb, begin, n, spec, scratch.data());
                ASSERT_EQ(done, taken) << "layout " << int(layout) << " nb " << nb << " k " << kk << " kind "
                                       << int(kind) << " string length " << string_len << " table " << table;
                if (!done) {
                  ASSERT_EQ(got.words, want.words) << "added while declining";
                  ASSERT_EQ(scratch, scratch_before) << "wrote scratch while declining";
                  continue;
                }
                scalar_kernels().bloom_add(want.ref, h.data(), n, {});
                ASSERT_EQ(got.words, want.words) << "nb " << nb << " k " << kk << " n " << n << " kind " << int(kind)
                                                 << " string length " << string_len;
              }
            }
          }
        }
      }
    }
  });
#if HWY_ARCH_X86_64
  if (hwy::SupportedTargets() & (HWY_AVX3 | HWY_AVX3_DL)) {
    EXPECT_TRUE(any) << "no AVX-512 target was tested";
  }
#endif
  EXPECT_EQ(scalar_kernels().bloom_add_keys, nullptr) << "the reference hashes, then adds";
}

// bloom_add_owned_keys adds, of keys [begin, begin + n), exactly those whose
// hash lies in `own`: what the reference sets for those hashes alone, into a
// filter already holding other keys. Ranges: every hash, two owners' halves
// split at a random point (so that two calls together add every key), one
// that holds the largest hash only, one in the middle and one that holds no
// key of the batch; u64 keys and 16-byte strings (the batch check's width
// marked), both hashes, filters of either layout past the cache (prefetched
// in one level and in two), kPrefetchedLengths (kTwoLevelLengths in two);
// scratch random before. Where it declines (a filter in the cache; u32 and
// pre-hashed keys; 8-byte strings and unmarked 16-byte ones) it returns false
// and touches neither filter nor scratch. Present where bloom_add_keys is.
TEST_F(SimdKernels, BloomAddOwnedKeysAddsOnlyTheOwnersKeys) {
  const HashSpec specs[] = {HashSpec{}, HashSpec::redis()};
  struct Kind {
    KeyKind kind;
    std::size_t string_len;
    bool marked;
  };
  const Kind kinds[] = {{KeyKind::U64, 0, false},       {KeyKind::Offsets32, 16, true},
                        {KeyKind::Offsets64, 16, true},  {KeyKind::U32, 0, false},
                        {KeyKind::Prehashed, 0, false},  {KeyKind::Offsets32, 8, true},
                        {KeyKind::Offsets64, 16, false}};
  [[maybe_unused]] bool any = false;
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    const bool avx512 = (t->bit & (HWY_AVX3 | HWY_AVX3_DL)) != 0;
    ASSERT_EQ(t->kernels->bloom_add_owned_keys != nullptr, avx512);
    if (!avx512) continue;
    any = true;
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      // 1000 cacheline512 blocks: in the cache; 2^14: 1 MiB, prefetched in one level; kTwoLevelBlocks, two.
      for (std::uint64_t cacheline_nb : {std::uint64_t{1000}, std::uint64_t{1} << 14, kTwoLevelBlocks}) {
        const bool sbbf = layout == BloomLayout::ParquetSbbf;
        const std::uint64_t nb = sbbf ? 2 * cacheline_nb : cacheline_nb;
        const bool large = cacheline_nb != 1000;
        const bool two_level = cacheline_nb == kTwoLevelBlocks;
        const std::vector<std::uint32_t> ks = sbbf ? std::vector<std::uint32_t>{layout::kSbbfK}
                                                   : std::vector<std::uint32_t>{1, 6, 16};
        for (std::uint32_t kk : ks) {
          if (two_level && kk == 1) continue;
          Filter want(nb, kk, layout), got(nb, kk, layout);
          for (const auto& [kind, string_len, marked] : kinds) {
            const bool strings = string_len != 0;
            const bool taken = large && (kind == KeyKind::U64 || (strings && string_len == 16 && marked));
            for (const HashSpec& spec : specs) {
              for (std::size_t n : two_level ? kTwoLevelLengths : kPrefetchedLengths) {
                if (!taken && n != 5 && n != 97) continue;  // declined whatever the count
                std::vector<std::uint64_t> src;
                std::optional<StringColumn> column;
                KeyBatch kb;
                if (strings) {
                  column.emplace(rng_, n + 3, string_len, 0, StringColumn::Fixed::All);
                  kb = column->batch(kind, marked);
                } else {
                  src = random_u64(rng_, n + 3);
                  kb.kind = kind;
                  kb.n = n + 3;
                  kb.keys = src.data();
                }
                const std::size_t begin = n % 3;
                std::vector<std::uint64_t> h(n);
                if (n != 0) scalar_kernels().hash(kb, begin, n, spec, h.data());
                const std::uint64_t split = rng_();
                const std::uint64_t middle_lo = h.empty() ? 0 : std::min(h[0], h[n / 2]);
                const std::uint64_t middle_hi = h.empty() ? 0 : std::max(h[0], h[n / 2]);
                const HashRange ranges[] = {
                    HashRange{},
                    HashRange{0, split - 1},
                    HashRange{split, ~std::uint64_t{0} - split},
                    HashRange{~std::uint64_t{0}, 0},
                    HashRange{middle_lo, middle_hi - middle_lo},
                    HashRange{middle_lo, 0},  // the one hash middle_lo, held by a key of the batch
                };
                for (const HashRange& own : ranges) {
                  if (two_level && &own - ranges > 2) break;  // two levels: every hash and the two halves
                  const std::vector<std::uint64_t> before = random_u64(rng_, 40);  // keys added earlier
                  std::fill(want.words.begin(), want.words.end(), 0u);
                  scalar_kernels().bloom_add(want.ref, before.data(), before.size(), {});
                  got.words = want.words;
                  std::vector<std::uint64_t> scratch = random_u64(rng_, n + 8);
                  const std::vector<std::uint64_t> scratch_before = scratch;
                  const bool done = t->kernels->bloom_add_owned_keys(got.ref, kb, begin, n, spec, own, scratch.data());
                  ASSERT_EQ(done, taken) << "layout " << int(layout) << " nb " << nb << " k " << kk << " kind "
                                         << int(kind) << " string length " << string_len << " marked " << marked;
                  if (!done) {
                    ASSERT_EQ(got.words, want.words) << "added while declining";
                    ASSERT_EQ(scratch, scratch_before) << "wrote scratch while declining";
                    break;
                  }
                  std::vector<std::uint64_t> mine;
                  for (std::uint64_t x : h) {
                    if (own.contains(x)) mine.push_back(x);
                  }
                  scalar_kernels().bloom_add(want.ref, mine.data(), mine.size(), {});
                  ASSERT_EQ(got.words, want.words) << "layout " << int(layout) << " nb " << nb << " k " << kk
                                                   << " n " << n << " kind " << int(kind) << " range " << own.lo
                                                   << " + " << own.span << " (" << mine.size() << " keys its own)";
                }
              }
            }
          }
        }
      }
    }
  }
#if HWY_ARCH_X86_64
  if (hwy::SupportedTargets() & (HWY_AVX3 | HWY_AVX3_DL)) {
    EXPECT_TRUE(any) << "no AVX-512 target was tested";
  }
#endif
  EXPECT_EQ(scalar_kernels().bloom_add_owned_keys, nullptr) << "the reference hashes, then adds";
}

// partition_hashes, every target and the scalar reference against the
// definition: the hashes below the split in their order, then the others in
// theirs, and nothing written past n. Splits: none below (0), all below
// (2^32), the middle, and random; lengths 0..70 and 10^5, input misaligned
// by one element; and hashes whose upper halves sit at the split and next to it.
TEST_F(SimdKernels, PartitionHashesIsStable) {
  std::vector<std::pair<const char*, const CpuKernels*>> kernels = {{"scalar", &scalar_kernels()}};
  for (const SimdTarget* t : targets_) {
    // Present exactly where it pays (partition-inl.h): a target that loses it, or gains one never measured, fails.
    const bool pays = t->bit == HWY_AVX3 || t->bit == HWY_AVX3_DL || t->bit == HWY_AVX2;
    ASSERT_EQ(t->kernels->partition_hashes != nullptr, pays) << t->name;
    if (t->kernels->partition_hashes != nullptr) kernels.push_back({t->name, t->kernels});
  }
#if HWY_ARCH_X86_64
  if (hwy::SupportedTargets() & (HWY_AVX3 | HWY_AVX3_DL)) {
    EXPECT_GT(kernels.size(), 1u) << "no AVX-512 target was tested";
  }
#endif
  constexpr std::uint64_t kGuard = 0xdeadbeefcafef00dULL;
  for (std::size_t n : lengths()) {
    Misaligned<std::uint64_t> in(n, 1);
    for (std::size_t i = 0; i < n; ++i) in.data()[i] = rng_();
    const std::uint64_t middle = std::uint64_t{1} << 31;
    std::vector<std::uint64_t> splits = {0, std::uint64_t{1} << 32, middle, rng_() >> 32};
    if (n >= 3) {
      // At the split, one below and one above it.
      for (std::size_t j = 0; j < 3; ++j) in.data()[rng_() % n] = ((middle - 1 + j) << 32) | (rng_() >> 32);
    }
    for (std::uint64_t split : splits) {
      std::vector<std::uint64_t> want_below, want_above;
      for (std::size_t i = 0; i < n; ++i)
        ((in.data()[i] >> 32) < split ? want_below : want_above).push_back(in.data()[i]);
      for (const auto& [name, k] : kernels) {
        std::vector<std::uint64_t> below(n + 8, kGuard), above(n + 8, kGuard);
        const std::size_t m = k->partition_hashes(in.data(), n, split, below.data(), above.data());
        ASSERT_EQ(m, want_above.size()) << name << " n " << n << " split " << split;
        EXPECT_TRUE(std::equal(want_above.begin(), want_above.end(), above.begin()))
            << name << " n " << n << " split " << split;
        EXPECT_TRUE(std::equal(want_below.begin(), want_below.end(), below.begin()))
            << name << " n " << n << " split " << split;
        for (std::size_t i = n; i < n + 8; ++i) {
          ASSERT_EQ(below[i], kGuard) << name << " wrote below past n " << n;
          ASSERT_EQ(above[i], kGuard) << name << " wrote above past n " << n;
        }
      }
    }
  }
}

}  // namespace
}  // namespace probkit::detail::simd_test
