// AVX-512 Bloom filter contains kernels (DESIGN.md §3): eight keys a loop step,
// and u64 keys and 16-byte strings hashed and tested in one loop.
// bloom_contains-inl.h dispatches to them; tests/simd_bloom_kernels_test.cc
// proves identity with the scalar reference.

#if defined(PROBKIT_CPU_BLOOM_CONTAINS_AVX512_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_CONTAINS_AVX512_INL_H_
#undef PROBKIT_CPU_BLOOM_CONTAINS_AVX512_INL_H_
#else
#define PROBKIT_CPU_BLOOM_CONTAINS_AVX512_INL_H_
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

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// AVX-512, cacheline512: every k in intrinsics (Highway 1.0.3 has no two-table
// lookup), eight keys a loop step; tests/simd_bloom_kernels_test.cc holds both
// forms to the reference. Block indices are computed in scalar code (from a
// vector multiply they were 1.1x slower). Each probe's bit is bit 0 of its word
// rotated right by its position (vprorvd takes the count mod 32), and the keys'
// 16-bit masks of missing probes are joined in mask registers (kunpck) before
// one move to a general register: 3.07 -> 2.64 TSC cycles per key (k <= 8)
// (docs/PERF-NOTES.md, "AVX-512 contains: block indices, rotates, joined masks").
inline constexpr std::uint32_t kCachelineKernelMaxK = layout::kMaxCachelineK;
inline constexpr std::size_t kK8Group = 8;  // keys per loop step: one vector of hashes

// The loop of the eight-key tests: block prefetching for large filters, the
// key stream, the answers. present(hashes + i) tests keys i..i+7 and returns
// bit l set iff key i + l is present. The last n % 8 keys go one at a time,
// by the generic loop for Present::kLayout.
template <bool kPrefetch, bool kStore, class Present>
HWY_INLINE std::uint64_t contains_by_eights(const detail::BloomRef& f, const std::uint64_t* hashes,
                                            std::size_t n, detail::BloomLookahead around,
                                            std::uint8_t* out, const Present& present) {
  const std::size_t prefetch_end = n + around.ahead;
  const BlockPrefetch ahead = kPrefetch ? block_prefetch(f) : BlockPrefetch{};
  if constexpr (kPrefetch) prefetch_first<false>(f, hashes, around.primed, prefetch_end, ahead);
  std::uint64_t hits = 0;
  std::size_t i = 0;
  for (; i + kK8Group <= n; i += kK8Group) {
    if constexpr (kPrefetch) {
      for (std::size_t a = i; a < i + kK8Group; ++a) prefetch_ahead<false>(f, hashes, a, prefetch_end, ahead);
    }
    prefetch_stream(hashes + i);  // pre-hashed keys come straight from memory
    const __mmask8 keys_present = present(hashes + i);
    // Counted from the zero-extended mask, as append_lanes (hash-inl.h) says why.
    hits += static_cast<std::uint64_t>(__builtin_popcount(_cvtmask8_u32(keys_present)));
    if constexpr (kStore)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_maskz_set1_epi8(keys_present, 1));
  }
  // The steps prefetched up to their last key's distances ahead. The rest,
  // up to the keys ahead, go now: the next call counts them primed.
  if constexpr (kPrefetch) {
    for (std::size_t a = i; a < n; ++a) prefetch_ahead<false>(f, hashes, a, prefetch_end, ahead);
  }
  return hits + contains_loop<false, kStore, Present::kLayout>(f, hashes + i, n - i, {},
                                                               kStore ? out + i : nullptr);
}

// The eight keys' answers from the pair tests' masks of missing probes
// (miss[j]: key 2j's in bits 0-7, key 2j + 1's in bits 8-15), joined in mask
// registers before one move to a general register: bit l set iff key l has
// none missing.
HWY_INLINE __mmask8 pairs_present(const __mmask16 (&miss)[4]) {
  const std::uint64_t missing = _cvtmask64_u64(
      _mm512_kunpackd(_mm512_kunpackw(miss[3], miss[2]), _mm512_kunpackw(miss[1], miss[0])));
  // A key is present iff its byte of missing probes is zero.
  return static_cast<__mmask8>(
      _mm_cmpeq_epi8_mask(_mm_cvtsi64_si128(static_cast<long long>(missing)), _mm_setzero_si128()));
}

// The pair tests' step: the eight keys' blocks, and for each pair j (keys 2j
// and 2j + 1) pair_miss(x, block A, block B) with x holding key A's hash word
// in lanes 0-7 and key B's in lanes 8-15; it returns the pair's missing
// probes as pairs_present takes them.
template <class PairMiss>
HWY_INLINE __mmask8 present_by_pairs(const std::uint64_t* h8, std::uint64_t num_blocks,
                                     const PairMiss& pair_miss) {
  const __m512i h = _mm512_loadu_si512(h8);
  std::uint64_t block[kK8Group];
  for (std::size_t l = 0; l < kK8Group; ++l) block[l] = layout::block_index(h8[l], num_blocks);
  __mmask16 miss[4];
  for (int j = 0; j < 4; ++j) {
    miss[j] = pair_miss(_mm512_permutexvar_epi32(key_pair_pick(j), h), block[2 * j],
                        block[2 * j + 1]);
  }
  return pairs_present(miss);
}

// k <= 8: two keys per 512-bit vector. Lanes 0-7 hold key A's probes, lanes
// 8-15 key B's; one two-table permute reads both keys' words from their two
// blocks (word indices 16..31 select block B), and one masked test finds the
// missing probes of both. test(h8): bit l set iff key l of the eight is present.
class CachelinePairsTest {
 public:
  static constexpr BloomLayout kLayout = BloomLayout::Cacheline512;
  explicit CachelinePairsTest(const detail::BloomRef& f)
      : words_(f.words),
        num_blocks_(f.num_blocks),
        live_(static_cast<__mmask16>(((1u << f.k) - 1) * 0x0101u)),
        salt_(_mm512_broadcast_i32x8(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt)))) {}
  HWY_INLINE __mmask8 operator()(const std::uint64_t* h8) const {
    // Key B's positions + 512: its word indices land in 16..31, the same bits.
    const __m512i key_b_bias = _mm512_set_epi32(512, 512, 512, 512, 512, 512, 512, 512,  //
                                                0, 0, 0, 0, 0, 0, 0, 0);
    const __m512i one = _mm512_set1_epi32(1);
    return present_by_pairs(h8, num_blocks_, [&](__m512i x, std::uint64_t a, std::uint64_t b) {
      const __m512i pos =
          _mm512_add_epi32(_mm512_srli_epi32(_mm512_mullo_epi32(x, salt_), 23), key_b_bias);
      const __m512i words = _mm512_permutex2var_epi32(
          _mm512_loadu_si512(words_ + a * layout::kCachelineWords), _mm512_srli_epi32(pos, 5),
          _mm512_loadu_si512(words_ + b * layout::kCachelineWords));
      return _mm512_mask_testn_epi32_mask(live_, _mm512_rorv_epi32(words, pos), one);
    });
  }

 private:
  const std::uint32_t* words_;
  std::uint64_t num_blocks_;
  __mmask16 live_;
  __m512i salt_;
};

// 8 < k <= 16: one key per vector, probe i in lane i; the hash's low word
// broadcast by its load. It replaces the generic test (cacheline_test: 1 <<
// position shifted in, lanes past k cleared by an AND, a kortest per key):
// k = 16 238-345 -> 269-403 M keys/s (u64 keys, 256 KiB). Ports 0 and 5 bound
// it; word indices by vpmultishiftqb ran alike, so both targets shift
// (docs/PERF-NOTES.md, "AVX-512 contains: 8 < k <= 16, one key a vector").
class CachelineWideTest {
 public:
  static constexpr BloomLayout kLayout = BloomLayout::Cacheline512;
  explicit CachelineWideTest(const detail::BloomRef& f)
      : words_(f.words),
        num_blocks_(f.num_blocks),
        live_(static_cast<__mmask16>((1u << f.k) - 1)),
        salt_(_mm512_loadu_si512(layout::kBloomSalt)) {}
  HWY_INLINE __mmask8 operator()(const std::uint64_t* h8) const {
    const __m512i one = _mm512_set1_epi32(1);
    __mmask16 miss[kK8Group];  // key l's missing probes
    for (std::size_t l = 0; l < kK8Group; ++l) {
      const std::uint32_t* block =
          words_ + layout::block_index(h8[l], num_blocks_) * layout::kCachelineWords;
      const __m512i p = _mm512_mullo_epi32(_mm512_broadcastd_epi32(_mm_loadu_si32(h8 + l)), salt_);
      // vpermd reads the low four bits of each index: the word, p >> 28.
      const __m512i words =
          _mm512_permutexvar_epi32(_mm512_srli_epi32(p, 28), _mm512_loadu_si512(block));
      miss[l] = _mm512_mask_testn_epi32_mask(
          live_, _mm512_rorv_epi32(words, _mm512_srli_epi32(p, 23)), one);
    }
    const std::uint64_t low = _cvtmask64_u64(
        _mm512_kunpackd(_mm512_kunpackw(miss[3], miss[2]), _mm512_kunpackw(miss[1], miss[0])));
    const std::uint64_t high = _cvtmask64_u64(
        _mm512_kunpackd(_mm512_kunpackw(miss[7], miss[6]), _mm512_kunpackw(miss[5], miss[4])));
    // A key is present iff its 16 bits of missing probes are zero.
    return _mm_cmpeq_epi16_mask(
        _mm_set_epi64x(static_cast<long long>(high), static_cast<long long>(low)),
        _mm_setzero_si128());
  }

 private:
  const std::uint32_t* words_;
  std::uint64_t num_blocks_;
  __mmask16 live_;
  __m512i salt_;
};

// parquet_sbbf: two keys per 512-bit vector, as CachelinePairsTest: lanes 0-7
// key A's eight words (its 32-byte block in the low half), lanes 8-15 key B's
// (its block inserted in the high half); word i's bit is (x * salt_i) >> 27,
// tested by rotating it to bit 0. With it and the fused loop, u64 keys ran at
// 640 M keys/s against 451 by the generic test (sbbf_test); hashed, then tested
// they ran faster still (698 against 653 fused), strings did not (334 against
// 392). So u64 keys into this layout are hashed, then tested
// (docs/PERF-NOTES.md, "AVX-512 contains: parquet_sbbf, two keys a vector").
class SbbfPairsTest {
 public:
  static constexpr BloomLayout kLayout = BloomLayout::ParquetSbbf;
  explicit SbbfPairsTest(const detail::BloomRef& f)
      : words_(f.words),
        num_blocks_(f.num_blocks),
        salt_(_mm512_broadcast_i32x8(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt)))) {}
  HWY_INLINE __mmask8 operator()(const std::uint64_t* h8) const {
    const __m512i one = _mm512_set1_epi32(1);
    return present_by_pairs(h8, num_blocks_, [&](__m512i x, std::uint64_t a, std::uint64_t b) {
      const __m512i shift = _mm512_srli_epi32(_mm512_mullo_epi32(x, salt_), 27);
      const __m512i words = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_loadu_si256(
              reinterpret_cast<const __m256i*>(words_ + a * layout::kSbbfWords))),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(words_ + b * layout::kSbbfWords)), 1);
      return _mm512_testn_epi32_mask(_mm512_rorv_epi32(words, shift), one);
    });
  }

 private:
  const std::uint32_t* words_;
  std::uint64_t num_blocks_;
  __m512i salt_;
};

// fn(std::type_identity<Test>()) with the eight-key test for the filter's
// layout and k. kSbbf: whether parquet_sbbf filters come here; if not, the
// caller passes cacheline512 filters only and nothing for parquet_sbbf is
// compiled.
template <bool kSbbf = true, class Fn>
HWY_INLINE std::uint64_t with_eights_test_type(const detail::BloomRef& f, const Fn& fn) {
  if constexpr (kSbbf) {
    if (f.layout == BloomLayout::ParquetSbbf) return fn(std::type_identity<SbbfPairsTest>());
  }
  return f.k <= 8 ? fn(std::type_identity<CachelinePairsTest>())
                  : fn(std::type_identity<CachelineWideTest>());
}

// The eight-key loop over hashes for a filter of either layout.
template <bool kPrefetch, bool kStore>
std::uint64_t contains_eights(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                              detail::BloomLookahead around, std::uint8_t* out) {
  return with_eights_test_type(f, [&](auto test) {
    return contains_by_eights<kPrefetch, kStore>(f, hashes, n, around, out,
                                                 typename decltype(test)::type(f));
  });
}

template <bool kPrefetch, bool kStore>
std::uint64_t contains_cacheline_kernel(const detail::BloomRef& f, const std::uint64_t* hashes,
                                        std::size_t n, detail::BloomLookahead around,
                                        std::uint8_t* out) {
  return contains_eights<kPrefetch, kStore>(f, hashes, n, around, out);
}

// Keys hashed and tested in one loop (kernels.hpp's bloom_contains_keys), as on
// AVX2 (see there; filters that miss the cache take contains_hashing_prefetched
// below): each step's eight hashes are tested a step after the hash pipeline
// stored them.
// Hashing alone leaves the vector pipes half idle (its multiplies' latency
// bounds it), so the tests fill them: u64 keys, k = 6, 256 KiB, hashed then
// tested 571 -> this loop 619 M keys/s (Intel). u32 keys ran slower here
// (cacheline512 648-700 -> 485-662), so they are hashed, then tested
// (docs/PERF-NOTES.md, "AVX-512 contains: hashing and testing in one loop").
template <bool kStore, class Hash, class Test>
HWY_NOINLINE std::uint64_t contains_hashing(const detail::BloomRef& f,
                                            const typename Hash::Key* keys, std::size_t count,
                                            HashSpec spec, std::uint64_t* scratch,
                                            std::uint8_t* out) {
  const Test test(f);
  std::uint64_t hits = 0;
  const auto test_step = [&](std::uint64_t* hashes, std::size_t first, std::size_t) {
    const __mmask8 present = test(hashes + first);
    hits += static_cast<std::uint64_t>(__builtin_popcount(_cvtmask8_u32(present)));
    if constexpr (kStore)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + first), _mm_maskz_set1_epi8(present, 1));
  };
  const std::size_t hashed =
      hash_fixed_pipelined<false, Hash>(keys, count, spec, scratch, 0, test_step);
  for (std::size_t i = hashed; i < count; ++i) scratch[i] = hash_one(spec, keys[i]);
  return hits + contains_loop<false, kStore, Test::kLayout>(f, scratch + hashed, count - hashed, {},
                                                            kStore ? out + hashed : nullptr);
}

// The same loop for a filter that misses the cache (one that the kernels
// prefetch for): each step's eight hashes have their blocks prefetched as the
// pipeline stores them, into L2 where the kernels prefetch in two levels and
// into L1 d.l2 - d.l1 keys later, and are tested d.l2 keys (d.l1 for one
// level) after their hashing, as contains_by_eights tests pre-hashed keys.
// Hashed, then tested, the hashing stopped every chunk's block prefetches
// for as long as it ran, and the misses in flight drained while it did. Zen 4
// guest, AVX3_DL, u64 keys, k = 6, one thread, public contains, M keys/s,
// medians of 30 calls of 2^20 keys alternated in one process with the
// hashed-then-tested path: 1 GiB 150.7 -> 159.4 and 141.1 -> 154.4, 32 MiB
// 204.3 -> 248.8 and 192.5 -> 218.5, 4 MiB 252.0 -> 349.9 and 353.7 -> 500.5,
// 1 MiB 385.4 -> 536.7 (docs/PERF-NOTES.md, "Hashing in the loop for filters
// past the cache"). Hash: the u64 keys' hash, or String16Pipeline for a batch
// of 16-byte strings, its pipeline (hash_width16_pipelined_as) picked by `if
// constexpr` in this body, in each of the two loops (as a helper beside
// them, or with this loop's body a helper taking the pipeline as a callable,
// the u64 loop compiled otherwise; the second read 0.95-0.98 at 1 GiB in
// three runs of four); against hashed, then tested, 16-byte strings: 1 GiB
// 1.10-1.11, 32 MiB 1.22-1.25, 4 MiB 1.47-1.50. Into parquet_sbbf (Test: SbbfPairsTest) likewise, u64 keys:
// 1 GiB 1.03-1.10, 32 MiB 1.20-1.23, 4 MiB 1.31-1.36; 16-byte strings
// 1.16-1.17 / 1.30-1.32 / 1.44-1.45 (in the cache u64 keys into
// parquet_sbbf are hashed, then tested: SbbfPairsTest's figures). Other
// strings are hashed, then tested.
template <bool kStore, class Hash, class Test>
HWY_NOINLINE std::uint64_t contains_hashing_prefetched(const detail::BloomRef& f,
                                                       const typename Hash::Key* keys,
                                                       std::size_t count, HashSpec spec,
                                                       std::uint64_t* scratch, std::uint8_t* out) {
  static_assert(detail::kBloomPrefetchKeysAhead % kK8Group == 0 && detail::kBloomNearPrefetchKeysAhead % kK8Group == 0 &&
                    detail::kBloomL1PrefetchKeysAhead % kK8Group == 0,
                "the steps test whole steps, from the first: the lead must be whole steps");
  const Test test(f);
  const BlockPrefetch d = block_prefetch(f);
  // Keys between a key's hashing and its test: whole steps, as the pipeline stores them.
  const std::size_t lead = d.farthest();
  const std::size_t to_l1 = d.l2 != 0 ? d.l2 - d.l1 : 0;  // keys from the prefetch into L2 to that into L1
  std::uint64_t hits = 0;
  const auto step = [&](std::uint64_t* hashes, std::size_t first, std::size_t) {
    for (std::size_t a = first; a < first + kK8Group; ++a) {
      if (d.l2 != 0) {
        prefetch_block_to_l2(f, hashes[a]);
      } else {
        prefetch_block<false>(f, hashes[a]);
      }
    }
    if (d.l2 != 0 && first >= to_l1) {
      for (std::size_t a = first - to_l1; a < first - to_l1 + kK8Group; ++a) prefetch_block<false>(f, hashes[a]);
    }
    if (first >= lead) {
      const std::size_t t = first - lead;
      const __mmask8 present = test(hashes + t);
      hits += static_cast<std::uint64_t>(__builtin_popcount(_cvtmask8_u32(present)));
      if constexpr (kStore)
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + t), _mm_maskz_set1_epi8(present, 1));
    }
  };
  std::size_t hashed;
  if constexpr (kIsString16Pipeline<Hash>) {
    hash_width16_pipelined_as<Hash::kXxhHash>(keys, count / kK8Group, spec, scratch, step);
    hashed = count / kK8Group * kK8Group;
    for (std::size_t i = hashed; i < count; ++i) scratch[i] = layout::hash_bytes(spec, keys + 16 * i, 16);
  } else {
    hashed = hash_fixed_pipelined<false, Hash>(keys, count, spec, scratch, 0, step);
    for (std::size_t i = hashed; i < count; ++i) scratch[i] = hash_one(spec, keys[i]);
  }
  // The steps tested keys [0, tested); the rest have their blocks asked for
  // as far as the steps reached (into L2 up to `hashed`, into L1 up to
  // hashed - to_l1), and the eight-key loop goes on from there.
  const std::size_t tested = hashed > lead ? hashed - lead : 0;
  return hits + contains_by_eights<true, kStore>(f, scratch + tested, count - tested,
                                                 detail::BloomLookahead{hashed - tested, 0},
                                                 kStore ? out + tested : nullptr, test);
}

// The same loop for strings all 16 bytes long (hash_width16_pipelined_as):
// hashed then tested 344 -> this loop 396 M keys/s (k = 6, 256 KiB). Each of
// the two loops has a step lambda of its own: one functor for both took the
// u64 contains to 626 against 646-651 M keys/s
// (docs/PERF-NOTES.md, "AVX-512 contains: 16-byte strings in one loop").
template <bool kStore, bool kXxh, class Test>
HWY_NOINLINE std::uint64_t contains_hashing_str16(const detail::BloomRef& f, const std::uint8_t* p,
                                                  std::size_t count, HashSpec spec,
                                                  std::uint64_t* scratch, std::uint8_t* out) {
  const Test test(f);
  std::uint64_t hits = 0;
  const auto test_step = [&](std::uint64_t* hashes, std::size_t first, std::size_t) {
    const __mmask8 present = test(hashes + first);
    hits += static_cast<std::uint64_t>(__builtin_popcount(_cvtmask8_u32(present)));
    if constexpr (kStore)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + first), _mm_maskz_set1_epi8(present, 1));
  };
  const std::size_t vectors = count / kK8Group;
  hash_width16_pipelined_as<kXxh>(p, vectors, spec, scratch, test_step);
  const std::size_t hashed = vectors * kK8Group;
  for (std::size_t i = hashed; i < count; ++i)
    scratch[i] = layout::hash_bytes(spec, p + 16 * i, 16);
  return hits + contains_loop<false, kStore, Test::kLayout>(f, scratch + hashed, count - hashed, {},
                                                            kStore ? out + hashed : nullptr);
}

// fn(store, xxh, test): the fused loop for this call, as compile-time
// constants: whether it stores answers (std::bool_constant), whether the hash
// is XXH64, and the eight-key test for the filter's layout and k
// (std::type_identity). kSbbf as for with_eights_test_type (strings, and any
// keys into a filter past the cache, come with parquet_sbbf filters; u64
// keys into one in the cache are hashed, then tested).
template <bool kSbbf, class Fn>
HWY_INLINE std::uint64_t with_fused_loop(const detail::BloomRef& f, HashSpec spec,
                                         const std::uint8_t* out, const Fn& fn) {
  const auto by_k = [&](auto store, auto xxh) {
    return with_eights_test_type<kSbbf>(f, [&](auto test) { return fn(store, xxh, test); });
  };
  const bool xxh = spec.kind == HashKind::Xxh64;
  if (out != nullptr) {
    return xxh ? by_k(std::true_type(), std::true_type())
               : by_k(std::true_type(), std::false_type());
  }
  return xxh ? by_k(std::false_type(), std::true_type())
             : by_k(std::false_type(), std::false_type());
}

// A chunk of strings: those all 16 bytes long in one loop, others hashed
// (hash_keys), then tested.
template <class Offset>
HWY_INLINE std::uint64_t contains_strings(const detail::BloomRef& f, const detail::KeyBatch& keys,
                                          std::size_t begin, std::size_t count, HashSpec spec,
                                          std::uint64_t* scratch, std::uint8_t* out) {
  const auto* offsets = static_cast<const Offset*>(keys.keys) + begin;
  if (count >= kK8Group && window_width(keys, offsets, count) == 16) {
    const std::uint8_t* p = keys.data + offsets[0];
    return with_fused_loop<true>(f, spec, out, [&](auto store, auto xxh, auto test) {
      return contains_hashing_str16<decltype(store)::value, decltype(xxh)::value,
                                    typename decltype(test)::type>(f, p, count, spec, scratch, out);
    });
  }
  hash_keys(keys, begin, count, spec, scratch);
  return out != nullptr ? contains_eights<false, true>(f, scratch, count, {}, out)
                        : contains_eights<false, false>(f, scratch, count, {}, out);
}

inline bool bloom_contains_keys(const detail::BloomRef& f, const detail::KeyBatch& keys,
                                std::size_t begin, std::size_t count, HashSpec spec,
                                std::uint64_t* scratch, std::uint8_t* out, std::uint64_t* hits) {
  const bool prefetched = prefetch_distance(f) != 0;
  if (prefetched) {
    // u64 keys and a batch of 16-byte strings, into either layout: the rest are hashed, then tested.
    if (keys.kind == detail::KeyKind::U64) {
      const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
      *hits += with_fused_loop<true>(f, spec, out, [&](auto store, auto xxh, auto test) {
        using Hash = std::conditional_t<decltype(xxh)::value, Xxh64U64, Murmur64AU64>;
        return contains_hashing_prefetched<decltype(store)::value, Hash, typename decltype(test)::type>(
            f, k, count, spec, scratch, out);
      });
      return true;
    }
    if (!detail::is_string16_batch(keys)) return false;
    if (count == 0) return true;
    const std::uint8_t* p = string_start(keys, begin);
    *hits += with_fused_loop<true>(f, spec, out, [&](auto store, auto xxh, auto test) {
      return contains_hashing_prefetched<decltype(store)::value, String16Pipeline<decltype(xxh)::value>,
                                         typename decltype(test)::type>(f, p, count, spec, scratch, out);
    });
    return true;
  }
  if (keys.kind == detail::KeyKind::Offsets32 || keys.kind == detail::KeyKind::Offsets64) {
    if (count == 0) return true;
    *hits += keys.kind == detail::KeyKind::Offsets32
                 ? contains_strings<std::int32_t>(f, keys, begin, count, spec, scratch, out)
                 : contains_strings<std::int64_t>(f, keys, begin, count, spec, scratch, out);
    return true;
  }
  // u64 keys into parquet_sbbf, and u32 keys, ran faster hashed, then tested
  // (the figures above SbbfPairsTest and contains_hashing).
  if (keys.kind != detail::KeyKind::U64 || f.layout == BloomLayout::ParquetSbbf) return false;
  const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
  *hits += with_fused_loop<false>(f, spec, out, [&](auto store, auto xxh, auto test) {
    using Hash = std::conditional_t<decltype(xxh)::value, Xxh64U64, Murmur64AU64>;
    return contains_hashing<decltype(store)::value, Hash, typename decltype(test)::type>(
        f, k, count, spec, scratch, out);
  });
  return true;
}
inline constexpr auto kBloomContainsKeys = &bloom_contains_keys;

#endif  // HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_CONTAINS_AVX512_INL_H_
