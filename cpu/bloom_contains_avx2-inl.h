// AVX2 Bloom filter contains kernels (DESIGN.md §3): one key a 256-bit
// vector, and u64 keys hashed and tested in one loop. bloom_contains-inl.h
// dispatches to them; tests/simd_bloom_kernels_test.cc proves identity with the
// scalar reference.

#if defined(PROBKIT_CPU_BLOOM_CONTAINS_AVX2_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_CONTAINS_AVX2_INL_H_
#undef PROBKIT_CPU_BLOOM_CONTAINS_AVX2_INL_H_
#else
#define PROBKIT_CPU_BLOOM_CONTAINS_AVX2_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "bloom_common-inl.h"
#include "bloom_contains_generic-inl.h"
#include "hash-inl.h"
#include "hash_keys-inl.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX2

// AVX2, cacheline512: one key per 256-bit vector, probe i in lane i (k <= 8;
// up to 16 in two vectors).
// Everything comes from the product p = x * salt (position = p >> 23): the
// word's low three bits (p >> 28) index vpermd on both halves of the block,
// the word's top bit (p's sign bit) blends them, and 1 << (position & 31) is
// shifted out of a vector holding 1 only in the k live lanes. One vptest
// answers the key. The hash's low word is broadcast straight from memory (a
// load, where vmovd + vpbroadcastd from a register take two shuffle-port
// uops): 1.12-1.16x faster in a microbenchmark whose loop is port-bound.
inline constexpr std::uint32_t kCachelineKernelMaxK = layout::kMaxCachelineK;

// test(block, &hash): whether every probe of the hash is set in its block.
// kVectors vectors of probes: one for k <= 8, two for k <= 16 (probes 8-15
// in the second, from the same two loads of the block): past k = 8 the
// generic test ran at less than half the speed (Zen 3 guest, k = 9: 71-80
// -> 161-163 M keys/s). Other forms measured no faster: docs/PERF-NOTES.md,
// "AVX2 contains test (CachelineAvx2Test)".
template <std::size_t kVectors>
class CachelineAvx2Test {
  static_assert(kVectors == 1 || kVectors == 2);

 public:
  static constexpr std::uint32_t kWords = layout::kCachelineWords;
  explicit CachelineAvx2Test(const detail::BloomRef& f) {
    const LiveProbes live_lanes(f.k);
    for (std::size_t v = 0; v < kVectors; ++v) {
      salt_[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt + 8 * v));
      live_one_[v] = _mm256_and_si256(
          _mm256_load_si256(reinterpret_cast<const __m256i*>(live_lanes.lane + 8 * v)),
          _mm256_set1_epi32(1));
    }
  }
  HWY_INLINE bool operator()(const std::uint32_t* block, const std::uint64_t* h) const {
    const __m256i x = _mm256_broadcastd_epi32(_mm_loadu_si32(h));
    __m256i low_words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block));
    __m256i high_words = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 8));
    // Loads of their own, not folded into the vpermd (GCC folds them; the
    // empty asm stops it): on the Zen 3 guest folded loads ran 8-13% slower
    // (docs/PERF-NOTES.md, "AVX2 contains test (CachelineAvx2Test)").
    asm("" : "+x"(low_words), "+x"(high_words));
    if constexpr (kVectors == 1) {
      const auto [words, bits] = probe(low_words, high_words, x, 0);
      return _mm256_testc_si256(words, bits) != 0;  // no bit of `bits` missing from `words`
    } else {
      const auto [words0, bits0] = probe(low_words, high_words, x, 0);
      const auto [words1, bits1] = probe(low_words, high_words, x, 1);
      const __m256i missing =
          _mm256_or_si256(_mm256_andnot_si256(words0, bits0), _mm256_andnot_si256(words1, bits1));
      return _mm256_testz_si256(missing, missing) != 0;
    }
  }

 private:
  struct Probes {
    __m256i words, bits;  // lane i: the word probe 8v + i reads, and the bit it needs there
  };
  HWY_INLINE Probes probe(__m256i low_words, __m256i high_words, __m256i x, std::size_t v) const {
    const __m256i product = _mm256_mullo_epi32(x, salt_[v]);
    const __m256i word = _mm256_srli_epi32(product, 28);  // vpermd reads its low 3 bits
    const __m256 low = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(low_words, word));
    const __m256 high = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(high_words, word));
    return {
        _mm256_castps_si256(_mm256_blendv_ps(low, high, _mm256_castsi256_ps(product))),
        _mm256_sllv_epi32(live_one_[v], _mm256_and_si256(_mm256_srli_epi32(product, 23), bit_of_))};
  }

  __m256i salt_[kVectors];
  __m256i live_one_[kVectors];
  __m256i bit_of_ = _mm256_set1_epi32(31);
};

// AVX2, parquet_sbbf: one key per 256-bit vector, word i in lane i, its bit
// shifted out of 1 and one vptest answering the key (the hash's low word
// broadcast from memory, as above). It replaces the generic test (sbbf_test:
// the mask ANDed out, compared with zero and moved to a general register):
// family 6 model 167 guest (Intel), AVX2 pinned, u64 keys, 256 KiB, medians
// of 5, four alternated rounds: 350 -> 412 M keys/s with this test, 468
// with it in the loop that hashes and tests too (bloom_contains_keys, which
// takes this layout since); the cacheline512 contains beside it alike (376 /
// 376 / 372). Not measured on AMD.
class SbbfAvx2Test {
 public:
  static constexpr std::uint32_t kWords = layout::kSbbfWords;
  explicit SbbfAvx2Test(const detail::BloomRef&)
      : salt_(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt))),
        one_(_mm256_set1_epi32(1)) {}
  HWY_INLINE bool operator()(const std::uint32_t* block, const std::uint64_t* h) const {
    const __m256i x = _mm256_broadcastd_epi32(_mm_loadu_si32(h));
    const __m256i bits =
        _mm256_sllv_epi32(one_, _mm256_srli_epi32(_mm256_mullo_epi32(x, salt_), 27));
    // No bit of `bits` missing from the block's words.
    return _mm256_testc_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(block)), bits) !=
           0;
  }

 private:
  __m256i salt_;
  __m256i one_;
};

// fn(std::integral_constant<std::size_t, kVectors>()): the vectors of probes
// of CachelineAvx2Test for k probes, as a compile-time constant.
template <class Fn>
HWY_INLINE std::uint64_t with_probe_vectors(std::uint32_t k, const Fn& fn) {
  return k <= 8 ? fn(std::integral_constant<std::size_t, 1>())
                : fn(std::integral_constant<std::size_t, 2>());
}

template <bool kPrefetch, bool kStore>
std::uint64_t contains_cacheline_kernel(const detail::BloomRef& f, const std::uint64_t* hashes,
                                        std::size_t n, detail::BloomLookahead around,
                                        std::uint8_t* out) {
  return with_probe_vectors(f.k, [&](auto vectors) {
    return contains_each<kPrefetch, kStore, layout::kCachelineWords>(
        f, hashes, n, around, out, CachelineAvx2Test<decltype(vectors)::value>(f));
  });
}

// Keys hashed and tested in one loop (kernels.hpp's bloom_contains_keys): the
// hash pipeline hands each step's hashes, a step after it stored them, to
// the test, which then runs beside the next steps' hashing. Hashed first and
// tested after, the two halves ran one after the other, each on its own
// bound (the vector pipes, then the filter's lines in L2); two keys a step
// hashed in scalar code beside each vector (one when hashing alone: there the
// integer multiplier has no other work) keep the vector pipes for the tests.
// (Zen 5 guest, XXH64, k = 6: 4.84-5.20 -> 4.13-4.45 TSC cycles per key;
// on the Zen 3 guest, whose vector pipes bound both halves, it gains
// little). Only u64 keys into a filter in the cache: strings in such a
// loop and each step prefetching the next step's blocks ran slower, and for
// filters that miss the cache interleaving did not hide the hashing. The
// AVX2 add has no such loop. Figures: docs/PERF-NOTES.md, "AVX2 contains:
// hashing and testing in one loop" and "Bloom add: hashing and adding in
// one loop".
inline constexpr std::size_t kScalarKeysBesideTests = 2;

// A function of its own that builds its own test: so GCC inlines the hash
// pipeline's step into it. With the test (in two sizes) built by
// bloom_contains_keys and passed in, GCC left that step out of line, and its
// stages' vectors went through memory (k = 6: 8.7 -> 14.8 TSC cycles per key
// on the Zen 3 guest). Forcing the step inline everywhere cost hashing alone
// and HLL add 5-10%; flattening this function ran k = 6 5-10% slower.
template <bool kStore, class Hash, class Test>
HWY_NOINLINE std::uint64_t contains_hashing(const detail::BloomRef& f,
                                            const typename Hash::Key* keys, std::size_t count,
                                            HashSpec spec, std::uint64_t* scratch,
                                            std::uint8_t* out) {
  const Test test(f);
  const std::uint32_t* const words = f.words;  // copies: stores to out may alias f
  const std::uint64_t num_blocks = f.num_blocks;
  std::uint64_t hits = 0;
  const auto test_step = [&](std::uint64_t* hashes, std::size_t first, std::size_t n) {
    for (std::size_t j = first; j < first + n; ++j) {
      const bool hit =
          test(words + layout::block_index(hashes[j], num_blocks) * Test::kWords, hashes + j);
      hits += hit;
      if constexpr (kStore) out[j] = hit;
    }
  };
  const std::size_t hashed = hash_fixed_pipelined<false, Hash, kScalarKeysBesideTests>(
      keys, count, spec, scratch, 0, test_step);
  for (std::size_t i = hashed; i < count; ++i) {
    scratch[i] = hash_one(spec, keys[i]);
    test_step(scratch, i, 1);
  }
  return hits;
}

inline bool bloom_contains_keys(const detail::BloomRef& f, const detail::KeyBatch& keys,
                                std::size_t begin, std::size_t count, HashSpec spec,
                                std::uint64_t* scratch, std::uint8_t* out, std::uint64_t* hits) {
  if (keys.kind != detail::KeyKind::U64 || prefetch_distance(f) != 0) return false;
  const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
  const bool xxh = spec.kind == HashKind::Xxh64;
  const auto run = [&](auto test_type) {
    using Test = typename decltype(test_type)::type;
    if (out != nullptr) {
      return xxh ? contains_hashing<true, Xxh64U64, Test>(f, k, count, spec, scratch, out)
                 : contains_hashing<true, Murmur64AU64, Test>(f, k, count, spec, scratch, out);
    }
    return xxh ? contains_hashing<false, Xxh64U64, Test>(f, k, count, spec, scratch, out)
               : contains_hashing<false, Murmur64AU64, Test>(f, k, count, spec, scratch, out);
  };
  if (f.layout == BloomLayout::ParquetSbbf) {
    *hits += run(std::type_identity<SbbfAvx2Test>());
  } else {
    *hits += with_probe_vectors(f.k, [&](auto vectors) {
      return run(std::type_identity<CachelineAvx2Test<decltype(vectors)::value> >());
    });
  }
  return true;
}
inline constexpr auto kBloomContainsKeys = &bloom_contains_keys;

#endif  // HWY_TARGET == HWY_AVX2

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_CONTAINS_AVX2_INL_H_
