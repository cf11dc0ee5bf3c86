// Per-target blocked Bloom filter contains kernels (DESIGN.md §3). A key's
// probes sit in vector lanes (lane i = probe i): one multiply by the salt
// vector gives all k bit positions at once, with no branch per key.
// tests/simd_kernels_test.cc proves identity with the scalar reference.

#if defined(PROBKIT_CPU_BLOOM_CONTAINS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_CONTAINS_INL_H_
#undef PROBKIT_CPU_BLOOM_CONTAINS_INL_H_
#else
#define PROBKIT_CPU_BLOOM_CONTAINS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "bloom_common-inl.h"
#include "hash-inl.h"
#include "hash_keys-inl.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// block[word[i]] per lane: the block's 16 words are a table held in registers.
template <class D>
HWY_INLINE hn::Vec<D> lookup_words(D d, const std::uint32_t* block, hn::Vec<D> word) {
  const std::size_t n = hn::Lanes(d);
  if (n >= layout::kCachelineWords) {
    return hn::TableLookupLanes(hn::LoadU(d, block), hn::IndicesFromVec(d, word));
  }
  const auto lane = hn::And(word, hn::Set(d, static_cast<std::uint32_t>(n - 1)));
  const auto group = hn::Sub(word, lane);  // first word of the vector holding it
  auto out = hn::Zero(d);
  for (std::size_t j = 0; j < layout::kCachelineWords; j += n) {
    const auto v = hn::TableLookupLanes(hn::LoadU(d, block + j), hn::IndicesFromVec(d, lane));
    out = hn::IfThenElse(hn::Eq(group, hn::Set(d, static_cast<std::uint32_t>(j))), v, out);
  }
  return out;
}

// Per call, not per key (Highway 1.0.3's Iota goes through memory): all-ones
// in lanes i < k, so that probe lanes at or beyond k contribute nothing.
struct LiveProbes {
  HWY_ALIGN std::uint32_t lane[layout::kMaxCachelineK];
  explicit LiveProbes(std::uint32_t k) {
    for (std::uint32_t i = 0; i < layout::kMaxCachelineK; ++i) lane[i] = i < k ? ~0u : 0u;
  }
};

// Bits of probe lanes p..p+N-1 (0 in lanes at or beyond k).
template <class D>
HWY_INLINE hn::Vec<D> probe_bits(D d, hn::Vec<D> pos, std::size_t p, const LiveProbes& live) {
  const auto bit = hn::Shl(hn::Set(d, 1u), hn::And(pos, hn::Set(d, 31u)));
  return hn::And(bit, hn::Load(d, live.lane + p));
}

// 128-bit x86 vectors need four table lookups and an emulated variable shift
// per probe group: there the positions come from the vector multiply and the
// words are tested in scalar code, branch-free (measured 1.25x faster on SSE4).
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline constexpr bool kScalarWordTest = true;
#else
inline constexpr bool kScalarWordTest = false;
#endif

HWY_INLINE bool cacheline_test(const std::uint32_t* block, std::uint64_t h, std::uint32_t k,
                               const LiveProbes& live) {
  const DBlock d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  if constexpr (kScalarWordTest) {
    HWY_ALIGN std::uint32_t pos[layout::kCachelineWords];
    for (std::size_t p = 0; p < k; p += hn::Lanes(d))
      hn::Store(cacheline_positions(d, x, p), d, pos + p);
    std::uint32_t all = 1;
    for (std::uint32_t i = 0; i < k; ++i) all &= block[pos[i] >> 5] >> (pos[i] & 31);
    return (all & 1) != 0;
  }
#if !HWY_HAVE_SCALABLE
  if constexpr (hn::MaxLanes(d) >= layout::kCachelineWords) {  // one vector holds it all
    const auto pos = cacheline_positions(d, x, 0);
    const auto words =
        hn::TableLookupLanes(hn::LoadU(d, block), hn::IndicesFromVec(d, hn::ShiftRight<5>(pos)));
    return hn::AllTrue(d, hn::Eq(hn::AndNot(words, probe_bits(d, pos, 0, live)), hn::Zero(d)));
  }
#endif
  auto missing = hn::Zero(d);
  for (std::size_t p = 0; p < k; p += hn::Lanes(d)) {
    const auto pos = cacheline_positions(d, x, p);
    const auto words = lookup_words(d, block, hn::ShiftRight<5>(pos));
    missing = hn::Or(missing, hn::AndNot(words, probe_bits(d, pos, p, live)));
  }
  return hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

HWY_INLINE bool sbbf_test(const std::uint32_t* block, std::uint64_t h) {
  const DSbbf d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  auto missing = hn::Zero(d);
  for (std::size_t p = 0; p < layout::kSbbfWords; p += hn::Lanes(d)) {
    missing = hn::Or(missing, hn::AndNot(hn::LoadU(d, block + p), sbbf_bits(d, x, p)));
  }
  return hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

// The per-key contains loop: block prefetching for large filters, the key
// stream, the answer bytes and the count. test(block, &hash) answers one key;
// it gets the hash's address so that a kernel can broadcast from memory.
template <bool kPrefetch, bool kStore, std::uint32_t kWords, class Test>
HWY_INLINE std::uint64_t contains_each(const detail::BloomRef& f, const std::uint64_t* hashes,
                                       std::size_t n, detail::BloomLookahead around,
                                       std::uint8_t* out, const Test& test) {
  const std::size_t prefetch_end = n + around.ahead;
  const std::size_t distance = kPrefetch ? prefetch_distance(f) : 0;
  if constexpr (kPrefetch) prefetch_first<false>(f, hashes, around.primed, prefetch_end, distance);
  std::uint64_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) {
      if (i + distance < prefetch_end) prefetch_block<false>(f, hashes[i + distance]);
    }
    if (i % 8 == 0) prefetch_stream(hashes + i);
    const bool hit =
        test(f.words + layout::block_index(hashes[i], f.num_blocks) * kWords, hashes + i);
    hits += hit;
    if constexpr (kStore) out[i] = hit;
  }
  return hits;
}

template <bool kPrefetch, bool kStore, BloomLayout kLayout>
std::uint64_t contains_loop(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                            detail::BloomLookahead around, std::uint8_t* out) {
  if constexpr (kLayout == BloomLayout::Cacheline512) {
    const LiveProbes live(f.k);
    return contains_each<kPrefetch, kStore, layout::kCachelineWords>(
        f, hashes, n, around, out, [&](const std::uint32_t* block, const std::uint64_t* h) {
          return cacheline_test(block, *h, f.k, live);
        });
  } else {
    return contains_each<kPrefetch, kStore, layout::kSbbfWords>(
        f, hashes, n, around, out,
        [](const std::uint32_t* block, const std::uint64_t* h) { return sbbf_test(block, *h); });
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// AVX-512, cacheline512: every k in intrinsics (Highway 1.0.3 has no
// two-table lookup), eight keys a loop step; tests/simd_kernels_test.cc holds
// both forms to the reference. Block indices are computed in scalar code:
// from a vector multiply, stored and reloaded, they were 1.1x slower (the
// reloads wait on the store). Each probe's bit is bit 0 of its word rotated
// right by its position (vprorvd takes the count mod 32), and the keys'
// 16-bit masks of missing probes are joined in mask registers (kunpck)
// before one move to a general register: with 1 << position shifted in and
// each mask moved out, the k <= 8 kernel alone took 3.07 (16 KiB filter) and
// 3.10 (256 KiB) TSC cycles per key, now 2.64 and 2.66 (pre-hashed keys, best
// of 14 alternated runs, family 6 model 167 Xeon guest at 2.0 GHz; ports 0
// and 5 bound it).
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
  const std::size_t distance = kPrefetch ? prefetch_distance(f) : 0;
  if constexpr (kPrefetch) prefetch_first<false>(f, hashes, around.primed, prefetch_end, distance);
  std::uint64_t hits = 0;
  std::size_t i = 0;
  for (; i + kK8Group <= n; i += kK8Group) {
    if constexpr (kPrefetch) {
      for (std::size_t a = i + distance; a < i + distance + kK8Group && a < prefetch_end; ++a)
        prefetch_block<false>(f, hashes[a]);
    }
    prefetch_stream(hashes + i);  // pre-hashed keys come straight from memory
    const __mmask8 keys_present = present(hashes + i);
    hits += static_cast<std::uint64_t>(__builtin_popcount(keys_present));
    if constexpr (kStore)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_maskz_set1_epi8(keys_present, 1));
  }
  // The steps prefetched up to key i + distance. The rest, up to the keys
  // ahead, go now: the next call counts them primed.
  if constexpr (kPrefetch) {
    for (std::size_t a = i + distance; a < n + distance && a < prefetch_end; ++a)
      prefetch_block<false>(f, hashes[a]);
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
    const __m512i h = _mm512_loadu_si512(h8);
    std::uint64_t block[kK8Group];
    for (std::size_t l = 0; l < kK8Group; ++l) block[l] = layout::block_index(h8[l], num_blocks_);
    __mmask16 miss[4];  // bits 8j..8j+7: key 2j's missing probes, then key 2j + 1's
    for (int j = 0; j < 4; ++j) {
      const __m512i x = _mm512_permutexvar_epi32(key_pair_pick(j), h);
      const __m512i pos =
          _mm512_add_epi32(_mm512_srli_epi32(_mm512_mullo_epi32(x, salt_), 23), key_b_bias);
      const __m512i words = _mm512_permutex2var_epi32(
          _mm512_loadu_si512(words_ + block[2 * j] * layout::kCachelineWords),
          _mm512_srli_epi32(pos, 5),
          _mm512_loadu_si512(words_ + block[2 * j + 1] * layout::kCachelineWords));
      miss[j] = _mm512_mask_testn_epi32_mask(live_, _mm512_rorv_epi32(words, pos), one);
    }
    return pairs_present(miss);
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
// Emerald Rapids guest (family 6 model 207), AVX3_DL, bloom_contains_k (u64
// keys, hashing included, 256 KiB), medians of 5, four rounds alternated,
// k = 9 / 12 / 16: 330-345 / 244-347 / 238-345 -> 293-404 / 275-402 / 269-403
// M keys/s, the k <= 8 kernel beside them at 333-545. Ports 0 and 5 bound it:
// vpmulld takes two port-0 uops, each shift and vprorvd one. The word indices
// from AVX3_DL's vpmultishiftqb (port 5) instead of a shift ran alike
// (369-418 in the same rounds), so both targets shift.
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
// tested by rotating it to bit 0. The generic test (sbbf_test, one key per
// 256-bit vector and a branch-free answer per key) ran at 454 M keys/s (u64
// keys, 256 KiB, AVX3_DL), below the same filter's add (572). Model 167
// guest, medians of 5, four alternated rounds each: with this test and the
// fused loop (bloom_contains_keys) for both key kinds, u64 451 -> 640, two
// threads 892 -> 1231, 16-byte strings 258 -> 384, two threads 496 -> 732;
// filters that miss the cache alike (32 MiB 240 / 236, 1 GiB 59 / 59). Then
// u64 keys hashed, then tested (256 a chunk) against the fused loop: 698 /
// 653, two threads 1377 / 1259, where strings lost without it (334 / 392, two
// threads 653 / 774). So u64 keys into this layout are hashed, then tested.
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
    const __m512i h = _mm512_loadu_si512(h8);
    std::uint64_t block[kK8Group];
    for (std::size_t l = 0; l < kK8Group; ++l) block[l] = layout::block_index(h8[l], num_blocks_);
    __mmask16 miss[4];  // bits 8j..8j+7: key 2j's missing probes, then key 2j + 1's
    for (int j = 0; j < 4; ++j) {
      const __m512i x = _mm512_permutexvar_epi32(key_pair_pick(j), h);
      const __m512i shift = _mm512_srli_epi32(_mm512_mullo_epi32(x, salt_), 27);
      const __m512i words = _mm512_inserti64x4(
          _mm512_castsi256_si512(_mm256_loadu_si256(
              reinterpret_cast<const __m256i*>(words_ + block[2 * j] * layout::kSbbfWords))),
          _mm256_loadu_si256(
              reinterpret_cast<const __m256i*>(words_ + block[2 * j + 1] * layout::kSbbfWords)),
          1);
      miss[j] = _mm512_testn_epi32_mask(_mm512_rorv_epi32(words, shift), one);
    }
    return pairs_present(miss);
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
// AVX2 (see there; filters that miss the cache are declined likewise): each
// step's eight hashes are tested a step after the hash pipeline stored them.
// Hashing alone leaves the vector pipes half idle (its multiplies' latency
// bounds it: rotates and shifts moved from port 0 to vpmultishiftqb on port
// 5 ran alike), so the tests fill them. Family 6 model 167 guest (Intel,
// AVX3_DL), BloomFilter::contains, 256 KiB, one thread, M keys/s, medians of
// 5, six alternated rounds, hashed then tested against this loop: u64 k = 6
// 571 (514-603) -> 619 (601-625), two threads 1100 -> 1183, k = 8 578 -> 617,
// k = 9 474 -> 515, k = 16 476 -> 513; in a second run of five rounds, with
// a build that had the eight-key tests as these classes but hashed, then
// tested (both forms alike: 564 / 568, pre-hashed 869 / 876), k = 6 603, k =
// 9 467 / 463 -> 498, k = 16 474 / 466 -> 494. Not measured on AMD. The add
// did not gain so (below). Prefetching the next step's eight blocks into L1
// before each step's test (their hashes are stored by then) ran slower: k = 6
// 634 -> 550, two threads 1222 -> 1040, k = 16 526 -> 467. u32 keys in this
// loop ran slower than hashed, then tested (256 a chunk): public contains,
// 256 KiB, 2^20 keys a call, medians of 41 calls, three alternated runs,
// cacheline512 648-700 -> 485-662, parquet_sbbf 772-797 -> 663-686.
template <bool kStore, class Hash, class Test>
HWY_NOINLINE std::uint64_t contains_hashing(const detail::BloomRef& f,
                                            const typename Hash::Key* keys, std::size_t count,
                                            HashSpec spec, std::uint64_t* scratch,
                                            std::uint8_t* out) {
  const Test test(f);
  std::uint64_t hits = 0;
  const auto test_step = [&](std::uint64_t* hashes, std::size_t first, std::size_t) {
    const __mmask8 present = test(hashes + first);
    hits += static_cast<std::uint64_t>(__builtin_popcount(present));
    if constexpr (kStore)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + first), _mm_maskz_set1_epi8(present, 1));
  };
  const std::size_t hashed =
      hash_fixed_pipelined<false, Hash>(keys, count, spec, scratch, 0, test_step);
  for (std::size_t i = hashed; i < count; ++i) scratch[i] = hash_one(spec, keys[i]);
  return hits + contains_loop<false, kStore, Test::kLayout>(f, scratch + hashed, count - hashed, {},
                                                            kStore ? out + hashed : nullptr);
}

// The same loop for strings all 16 bytes long (hash_width16_pipelined_as).
// Same guest and runs as above, five rounds, 16-byte strings, 256 KiB, k = 6:
// contains 344 (325-350) -> 396 (364-410), two threads 662 -> 788; count 350
// -> 414, two threads 708 -> 817 (u64 keys beside them, unchanged code: 668
// / 641, count 672 / 665). Each of the two has its step lambda of its own:
// one functor for both (holding the test and the count by reference) took
// the u64 contains to 626 against 646-651 M keys/s (seven alternated rounds).
template <bool kStore, bool kXxh, class Test>
HWY_NOINLINE std::uint64_t contains_hashing_str16(const detail::BloomRef& f, const std::uint8_t* p,
                                                  std::size_t count, HashSpec spec,
                                                  std::uint64_t* scratch, std::uint8_t* out) {
  const Test test(f);
  std::uint64_t hits = 0;
  const auto test_step = [&](std::uint64_t* hashes, std::size_t first, std::size_t) {
    const __mmask8 present = test(hashes + first);
    hits += static_cast<std::uint64_t>(__builtin_popcount(present));
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
// (std::type_identity). kSbbf as for with_eights_test_type (strings come with
// parquet_sbbf filters; u64 keys into one are hashed, then tested).
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
  if (count >= kK8Group && uniform_width(offsets, count) == 16) {
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
  if (prefetch_distance(f) != 0) return false;  // either layout
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
#elif HWY_TARGET == HWY_AVX2
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
// The add has no such loop: each step's keys added a step behind their
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
// kCachelineBit (add_group_offsets a step behind the hash pipeline, the step
// before's keys set after it: add_cacheline_groups' order), same guest,
// AVX3_DL, 256 KiB, medians of 5, five alternated rounds, hashed then added
// against one loop: u64 k = 6 303 -> 254 M keys/s, two threads 585 -> 479, k
// = 4 354 -> 284, k = 16 166 -> 150. The add's loads are its bound (bloom_add-
// inl.h), and the hashing's stores and loads add to them.
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
#else
inline constexpr std::uint32_t kCachelineKernelMaxK = 0;
template <bool kPrefetch, bool kStore>
std::uint64_t contains_cacheline_kernel(const detail::BloomRef&, const std::uint64_t*, std::size_t,
                                        detail::BloomLookahead, std::uint8_t*) {
  return 0;  // never called: kCachelineKernelMaxK is 0
}
#endif

#if HWY_TARGET != HWY_AVX2 && HWY_TARGET != HWY_AVX3 && HWY_TARGET != HWY_AVX3_DL
// Only AVX2 and AVX-512 hash and test in one loop (see contains_hashing).
inline constexpr bool (*kBloomContainsKeys)(const detail::BloomRef&, const detail::KeyBatch&,
                                            std::size_t, std::size_t, HashSpec, std::uint64_t*,
                                            std::uint8_t*, std::uint64_t*) = nullptr;
#endif

template <bool kPrefetch, bool kStore>
std::uint64_t contains_layout(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                              detail::BloomLookahead around, std::uint8_t* out) {
  if (f.layout == BloomLayout::Cacheline512) {
    if (f.k <= kCachelineKernelMaxK) {
      return contains_cacheline_kernel<kPrefetch, kStore>(f, hashes, n, around, out);
    }
    // Not compiled where the kernel takes every k a filter can have (AVX2).
    if constexpr (kCachelineKernelMaxK < layout::kMaxCachelineK) {
      return contains_loop<kPrefetch, kStore, BloomLayout::Cacheline512>(f, hashes, n, around, out);
    }
  }
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return contains_eights<kPrefetch, kStore>(f, hashes, n, around, out);
#elif HWY_TARGET == HWY_AVX2
  return contains_each<kPrefetch, kStore, layout::kSbbfWords>(f, hashes, n, around, out,
                                                              SbbfAvx2Test(f));
#else
  return contains_loop<kPrefetch, kStore, BloomLayout::ParquetSbbf>(f, hashes, n, around, out);
#endif
}

inline std::uint64_t bloom_contains(const detail::BloomRef& f, const std::uint64_t* hashes,
                                    std::size_t n, detail::BloomLookahead around,
                                    std::uint8_t* out) {
  const bool prefetch = prefetch_distance(f) != 0;
  if (prefetch) {
    return out != nullptr ? contains_layout<true, true>(f, hashes, n, around, out)
                          : contains_layout<true, false>(f, hashes, n, around, out);
  }
  return out != nullptr ? contains_layout<false, true>(f, hashes, n, around, out)
                        : contains_layout<false, false>(f, hashes, n, around, out);
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_CONTAINS_INL_H_
