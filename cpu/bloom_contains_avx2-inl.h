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
// in the second, from the same two loads of the block). Past k = 8 the
// generic test (cacheline_test: the block loaded again for each vector of
// probes, each half's words picked by a compare) ran at less than half the
// speed: Zen 3 guest, AVX2, BloomFilter::contains of u64 keys, 256 KiB, one
// thread, medians of 3 (bloom_contains_k), two runs each: k = 9 80.3 / 71.1
// -> 160.9 / 162.6 M keys/s, k = 12 81.2 / 67.1 -> 155.0 / 161.8, k = 16
// 72.0 / 70.7 -> 176.6 / 161.3 (k = 8, the same code before and after:
// 219 / 177 -> 189 / 237, the guest's noise). Probes 8 to k - 1 tested in
// scalar code instead of the second vector (a multiply, a load and a shift
// each, for k <= 12) ran alike: k = 10, TSC cycles per key, min / median of
// 21 alternated batches, two runs, pre-hashed 9.47 / 10.40 and 9.54 / 10.23
// against 9.74 / 10.26 and 10.14 / 10.82, u64 13.62 / 15.80 and 13.50 /
// 15.58 against 13.27 / 14.75 and 13.69 / 16.16.
// Tried against this loop on the Zen 3 guest, k = 6, TSC cycles per key, min
// / median of 15 alternated rounds of a copy over 1024 pre-hashed keys,
// filter of 16 KiB then 256 KiB: the words picked by vpermilps from the
// block's four 16-byte quarters, each broadcast by its load, joined by three
// blends, 5.62 / 5.71 and 6.23 / 6.28 against 4.25 / 4.34 and 4.70 / 4.76;
// unrolled eight keys a step 3.90 / 3.94 and 4.41 / 4.47 against 4.17 / 4.19
// and 4.62 / 4.65, but in the library (keys streamed from memory) alike, min
// 5.35-5.54 against 5.45-5.62 in four runs; block offsets from vpmuludq a step
// ahead, or the hits counted from the stored answers, no faster unrolled.
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
    // empty asm stops it). On the Zen 3 guest, alternated, folded against
    // apart, TSC cycles per key: a microbenchmark of this test on pre-hashed
    // keys, medians of three rounds of 4001 passes over 1024 keys,
    // L1-resident filter 8.35-8.88 against 7.73-7.97, 256 KiB 10.60-10.67
    // against 9.38-9.45; BloomFilter::contains of u64 keys, 256 KiB, six runs
    // of 21-25 batches, best 9.57 / 9.58 / 9.82 / 18.41 / 9.69 / 10.69 against
    // 8.69 / 9.08 / 9.19 / 17.61 / 9.26 / 8.93 (medians lower in five). Not
    // measured on Zen 5 or Intel (where it costs a fused-domain uop per load).
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
// Zen 5 guest, AVX2 pinned, BloomFilter::contains of u64 keys, 256 KiB, k =
// 6, one thread, TSC cycles per key, medians of 20 batches of 2^20 keys
// alternated in one process, three runs: XXH64 4.84-5.20 -> 4.13-4.45 (one
// scalar key a step 4.16-4.80; none 4.20-5.60; three and four no better),
// MurmurHash64A 4.22-4.52 -> 3.41-3.77 (one scalar key 3.55-3.83); three
// runs of mixed minutes, XXH64 5.04-7.93 -> 4.44-7.86, MurmurHash64A
// 4.51-7.67 -> 4.17-7.44. In minutes when this guest ran slower (the loop at
// 7.5-8.8) the two came out alike, within 4% either way in eight of nine runs
// (5.97 against 7.47 in the ninth). On a Zen 3 guest (AVX2 served), whose
// vector pipes bound both halves, the loop gains little, and the choice
// holds: medians of 21 batches, three runs, two scalar keys a step
// 8.94-9.74, none 10.15-10.73, one 9.70-9.79, three 9.18-9.98, hashed then
// tested 9.17-9.19.
// Each step also prefetching the blocks of the next step's keys (their hashes
// stored a step ahead; `perf record -e cpu-clock` puts most samples on each
// step's first test, behind its block's loads) ran slower: family 6 model 167
// guest (Intel), AVX2 pinned, u64 keys, 256 KiB, medians of 5, five alternated
// rounds, cacheline512 378 -> 335 M keys/s, parquet_sbbf 477 -> 428.
// 16-byte strings in such a loop too (hash_width16_pipelined_as with its two
// scalar strings a step and this test after each step; chunks of other strings
// hashed, then tested) ran slower on that guest, and GCC then left the u64
// loop's pipeline step out of line: 256 KiB, M keys/s, medians of 5, five
// alternated rounds, strings 196.1 -> 182.2 (two threads 382.2 -> 347.9),
// parquet_sbbf 223.1 -> 206.6, u64 keys 381.3 -> 275.9. Strings are hashed,
// then tested.
// Filters that miss the cache (kPrefetch) are left to hashing, then testing.
// The hashing then adds to the wait on DRAM, and interleaving the two did not
// hide it: Zen 3 guest, AVX2, 1 GiB, k = 6, one thread, TSC cycles per key,
// medians of 15 alternated passes over 2^20 u64 keys: a bare loop reading each
// key's block 96 keys after prefetching it 34.7, the kernel on pre-hashed keys
// 41.2, hashed then tested (256 keys a chunk, as the bulk driver does) 44.5;
// with the keys hashed 32 at a time 96 keys ahead into a ring and one block
// prefetched per key 44.4 (16 keys 32 ahead 45.3, 32 keys 64 ahead 42.1, 64
// keys 128 ahead 44.6); each 32 keys' blocks prefetched as soon as they were
// hashed 62.0 against 53.0 (a busier minute). Hashing alone took 3.6.
// The AVX2 add has no such loop: each step's keys added a step behind their
// hashes (positions from vector multiplies, then word read-modify-writes)
// measured within 3% either way on Zen 5, and slower on the Zen 3 guest, 256
// KiB, medians of 15 batches: 12.73 -> 14.87 TSC cycles per key in a quiet
// minute, 22.04-22.65 -> 25.86-27.39 in slow ones. Nor with the positions
// from scalar multiplies (cacheline_set) behind the hash pipeline's steps,
// on the family 6 model 167 guest (Intel), AVX2 pinned, 256 KiB, k = 6, ms
// per 2^20 keys, medians of 3, three or four alternated rounds: u64 keys
// 5.42-6.40 against 4.43-4.92 hashed then added (one or two scalar keys a
// step beside the vector alike); 16-byte strings (hash_width16_pipelined
// with an after-step) 5.89-6.40 against 6.76-7.36 where GCC inlined the
// step into the pipeline, 7.13-7.83 where it left it out of line. Built as
// a kernel of its own (an AfterStep for hash_width16_pipelined_as, a
// HWY_NOINLINE loop per k and hash: the step inlined, no calls) and measured
// again on that guest at 21821d6 (bloom_add str16 256 KiB, M keys/s,
// medians of 5, six alternated rounds): AVX2 144.5 fused against 144.8 for
// the same build hashing then adding, both below the unchanged build's 152.6;
// the unchanged AVX3_DL strings add moved 216 -> 201-203 in both. Not
// landed. Not tried on the Zen 3 guest, whose scalar multiplier is not a
// vector port, as Intel's port 1 is. On AVX-512 with the masks from
// kCachelineBit, add_group_offsets a step behind the hash pipeline (the step
// before's keys set after it: add_cacheline_groups' order), same guest,
// AVX3_DL, 256 KiB, medians of 5, five alternated rounds, hashed then added
// against one loop: u64 k = 6 303 -> 254 M keys/s, two threads 585 -> 479, k
// = 4 354 -> 284, k = 16 166 -> 150. The loop that landed there instead
// (bloom_add_keys.cc, u64 keys and 16-byte strings) keeps the hash
// pipeline's vectors in registers, a stage a step, and computes each step's
// offsets from the hashes its last stage gives: u64 k = 6 299.9 -> 370.2
// (a form hashing three steps ahead had measured 320 -> 355). A standalone
// copy of the three-steps-ahead form had predicted less (XXH64 of u64 keys,
// 2^16 a pass, 256 KiB, k = 6, medians of 101 passes, core cycles per key at
// the 3.75 GHz its imul chain read: 12.4 fused against 13.1 hashed in chunks
// of 256 then added).
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
