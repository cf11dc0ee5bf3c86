// Per-target blocked Bloom filter kernels (DESIGN.md §3). A key's probes sit
// in vector lanes (lane i = probe i): one multiply by the salt vector gives all
// k bit positions at once, with no branch per key. Positions and salts are the
// layout's (layout/bloom.hpp); tests/simd_kernels_test.cc proves identity.

#if defined(PROBKIT_CPU_BLOOM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_INL_H_
#undef PROBKIT_CPU_BLOOM_INL_H_
#else
#define PROBKIT_CPU_BLOOM_INL_H_
#endif

#include <hwy/cache_control.h>
#include <hwy/highway.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "cacheline_bit_table.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// Up to one cacheline512 block (16 words) or one parquet_sbbf block (8 words)
// per vector.
using DBlock = hn::CappedTag<std::uint32_t, layout::kCachelineWords>;
using DSbbf = hn::CappedTag<std::uint32_t, layout::kSbbfWords>;

// Filters larger than this miss the cache: prefetch the block of the key this
// many keys ahead so that many misses are in flight at once.
inline constexpr std::size_t kPrefetchMinBytes = std::size_t{1} << 20;
inline constexpr std::size_t kPrefetchDistance = 32;  // 16..48 measured alike on 1 GiB

HWY_INLINE std::uint64_t filter_bytes(const detail::BloomRef& f) {
  return f.num_blocks * layout::block_bytes(f.layout);
}

template <bool kWrite>
HWY_INLINE void prefetch_block(const detail::BloomRef& f, std::uint64_t h) {
  const std::uint64_t b = layout::block_index(h, f.num_blocks);
  const std::uint32_t* p = f.words + b * layout::block_words(f.layout);
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // Every CPU with AVX2 has PREFETCHW; Highway's target flags do not name it.
  if constexpr (kWrite) {
    asm volatile("prefetchw %0" : : "m"(*reinterpret_cast<const char*>(p)));
    return;
  }
#endif
  hwy::Prefetch(p);
}

// The first keys of a chunk have nobody ahead of them to prefetch their blocks:
// issue those misses together before the loop, so they overlap too.
template <bool kWrite>
HWY_INLINE void prefetch_first(const detail::BloomRef& f, const std::uint64_t* hashes,
                               std::size_t n) {
  const std::size_t m = n < kPrefetchDistance ? n : kPrefetchDistance;
  for (std::size_t i = 0; i < m; ++i) prefetch_block<kWrite>(f, hashes[i]);
}

// cacheline512 probe positions a_i = (x * C[i]) >> 23 for probes p..p+N-1.
template <class D>
HWY_INLINE hn::Vec<D> cacheline_positions(D d, hn::Vec<D> x, std::size_t p) {
  return hn::ShiftRight<23>(hn::Mul(x, hn::LoadU(d, layout::kBloomSalt + p)));
}

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

// parquet_sbbf: word i gets bit (x * SALT[i]) >> 27.
template <class D>
HWY_INLINE hn::Vec<D> sbbf_bits(D d, hn::Vec<D> x, std::size_t p) {
  const auto shift = hn::ShiftRight<27>(hn::Mul(x, hn::LoadU(d, layout::kBloomSalt + p)));
  return hn::Shl(hn::Set(d, 1u), shift);
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
                                       std::size_t n, std::uint8_t* out, const Test& test) {
  if constexpr (kPrefetch) prefetch_first<false>(f, hashes, n);
  std::uint64_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) {
      if (i + kPrefetchDistance < n) prefetch_block<false>(f, hashes[i + kPrefetchDistance]);
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
                            std::uint8_t* out) {
  if constexpr (kLayout == BloomLayout::Cacheline512) {
    const LiveProbes live(f.k);
    return contains_each<kPrefetch, kStore, layout::kCachelineWords>(
        f, hashes, n, out, [&](const std::uint32_t* block, const std::uint64_t* h) {
          return cacheline_test(block, *h, f.k, live);
        });
  } else {
    return contains_each<kPrefetch, kStore, layout::kSbbfWords>(
        f, hashes, n, out,
        [](const std::uint32_t* block, const std::uint64_t* h) { return sbbf_test(block, *h); });
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// AVX-512, cacheline512, k <= 8: two keys per 512-bit vector. Lanes 0-7 hold
// key A's probes, lanes 8-15 key B's; one two-table permute reads both keys'
// words from their two blocks (word indices 16..31 select block B), and one
// masked test finds the missing probes of both. Block indices are computed in
// scalar code: from a vector multiply, stored and reloaded, they were 1.1x
// slower (the reloads wait on the store). Each probe's bit is bit 0 of its
// word rotated right by its position, and the four 16-bit masks of missing
// probes are joined in mask registers (kunpck) before one move to a general
// register: with 1 << position shifted in and each mask moved out, the
// kernel alone took 3.07 (16 KiB filter) and 3.10 (256 KiB) TSC cycles per
// key, now 2.64 and 2.66 (pre-hashed keys, best of 14 alternated runs,
// family 6 model 167 Xeon guest at 2.0 GHz; ports 0 and 5 bound it).
// Highway 1.0.3 has no two-table lookup, hence intrinsics;
// tests/simd_kernels_test.cc holds it to the reference.
inline constexpr bool kCachelineK8Kernel = true;
inline constexpr std::size_t kK8Group = 8;  // keys per loop step: one vector of hashes

// Indices for vpermd over a vector of eight hashes: the low 32 bits of hash
// 2j in lanes 0-7, of hash 2j+1 in lanes 8-15.
HWY_INLINE __m512i key_pair_pick(int j) {
  const int a = 4 * j, b = 4 * j + 2;
  return _mm512_set_epi32(b, b, b, b, b, b, b, b, a, a, a, a, a, a, a, a);
}

template <bool kPrefetch, bool kStore>
std::uint64_t contains_cacheline_k8(const detail::BloomRef& f, const std::uint64_t* hashes,
                                    std::size_t n, std::uint8_t* out) {
  const __m512i salt = _mm512_broadcast_i32x8(
      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt)));
  // Key B's positions + 512: its word indices land in 16..31, the same bits.
  const __m512i key_b_bias = _mm512_set_epi32(512, 512, 512, 512, 512, 512, 512, 512,  //
                                              0, 0, 0, 0, 0, 0, 0, 0);
  const __m512i one = _mm512_set1_epi32(1);
  const auto live = static_cast<__mmask16>(((1u << f.k) - 1) * 0x0101u);
  __m512i pick[kK8Group / 2];
  for (int j = 0; j < 4; ++j) pick[j] = key_pair_pick(j);
  if constexpr (kPrefetch) prefetch_first<false>(f, hashes, n);
  std::uint64_t hits = 0;
  std::size_t i = 0;
  for (; i + kK8Group <= n; i += kK8Group) {
    if constexpr (kPrefetch) {
      for (std::size_t a = i + kPrefetchDistance; a < i + kPrefetchDistance + kK8Group && a < n;
           ++a)
        prefetch_block<false>(f, hashes[a]);
    }
    prefetch_stream(hashes + i);  // pre-hashed keys come straight from memory
    const __m512i h = _mm512_loadu_si512(hashes + i);
    std::uint64_t block[kK8Group];
    for (std::size_t l = 0; l < kK8Group; ++l)
      block[l] = layout::block_index(hashes[i + l], f.num_blocks);
    __mmask16 miss[4];  // bits 8j..8j+7: key i + 2j's missing probes, then key i + 2j + 1's
    for (int j = 0; j < 4; ++j) {
      const __m512i x = _mm512_permutexvar_epi32(pick[j], h);
      const __m512i pos =
          _mm512_add_epi32(_mm512_srli_epi32(_mm512_mullo_epi32(x, salt), 23), key_b_bias);
      const __m512i words = _mm512_permutex2var_epi32(
          _mm512_loadu_si512(f.words + block[2 * j] * layout::kCachelineWords),
          _mm512_srli_epi32(pos, 5),
          _mm512_loadu_si512(f.words + block[2 * j + 1] * layout::kCachelineWords));
      // Bit 0 of each word rotated right by its position (the count is taken
      // mod 32) is the probe's bit.
      const __m512i probe_bit = _mm512_rorv_epi32(words, pos);
      miss[j] = _mm512_mask_testn_epi32_mask(live, probe_bit, one);
    }
    const std::uint64_t missing = _cvtmask64_u64(
        _mm512_kunpackd(_mm512_kunpackw(miss[3], miss[2]), _mm512_kunpackw(miss[1], miss[0])));
    // A key is present iff its byte of missing probes is zero.
    const __mmask16 present = _mm_cmpeq_epi8_mask(
        _mm_cvtsi64_si128(static_cast<long long>(missing)), _mm_setzero_si128());
    hits += static_cast<std::uint64_t>(__builtin_popcount(present & 0xFFu));
    if constexpr (kStore)
      _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm_maskz_set1_epi8(present, 1));
  }
  // The last n % 8 keys, one at a time.
  return hits + contains_loop<false, kStore, BloomLayout::Cacheline512>(f, hashes + i, n - i,
                                                                        kStore ? out + i : nullptr);
}
#elif HWY_TARGET == HWY_AVX2
// AVX2, cacheline512, k <= 8: one key per 256-bit vector, probe i in lane i.
// Everything comes from the product p = x * salt (position = p >> 23): the
// word's low three bits (p >> 28) index vpermd on both halves of the block,
// the word's top bit (p's sign bit) blends them, and 1 << (position & 31) is
// shifted out of a vector holding 1 only in the k live lanes. One vptest
// answers the key. The hash's low word is broadcast straight from memory (a
// load, where vmovd + vpbroadcastd from a register take two shuffle-port
// uops): 1.12-1.16x faster in a microbenchmark whose loop is port-bound.
inline constexpr bool kCachelineK8Kernel = true;

template <bool kPrefetch, bool kStore>
std::uint64_t contains_cacheline_k8(const detail::BloomRef& f, const std::uint64_t* hashes,
                                    std::size_t n, std::uint8_t* out) {
  const __m256i salt = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt));
  const LiveProbes live_lanes(f.k);
  const __m256i live_one = _mm256_and_si256(
      _mm256_load_si256(reinterpret_cast<const __m256i*>(live_lanes.lane)), _mm256_set1_epi32(1));
  const __m256i bit_of = _mm256_set1_epi32(31);
  return contains_each<kPrefetch, kStore, layout::kCachelineWords>(
      f, hashes, n, out, [&](const std::uint32_t* block, const std::uint64_t* h) {
        const __m256i product =
            _mm256_mullo_epi32(_mm256_broadcastd_epi32(_mm_loadu_si32(h)), salt);
        const __m256i word = _mm256_srli_epi32(product, 28);  // vpermd reads its low 3 bits
        const __m256 low = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block)), word));
        const __m256 high = _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(block + 8)), word));
        const __m256i words =
            _mm256_castps_si256(_mm256_blendv_ps(low, high, _mm256_castsi256_ps(product)));
        const __m256i bits =
            _mm256_sllv_epi32(live_one, _mm256_and_si256(_mm256_srli_epi32(product, 23), bit_of));
        return _mm256_testc_si256(words, bits) != 0;  // no bit of `bits` missing from `words`
      });
}
#else
inline constexpr bool kCachelineK8Kernel = false;
template <bool kPrefetch, bool kStore>
std::uint64_t contains_cacheline_k8(const detail::BloomRef&, const std::uint64_t*, std::size_t,
                                    std::uint8_t*) {
  return 0;  // never called: kCachelineK8Kernel is false
}
#endif

template <bool kPrefetch, bool kStore>
std::uint64_t contains_layout(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                              std::uint8_t* out) {
  if (kCachelineK8Kernel && f.layout == BloomLayout::Cacheline512 && f.k <= 8) {
    return contains_cacheline_k8<kPrefetch, kStore>(f, hashes, n, out);
  }
  return f.layout == BloomLayout::Cacheline512
             ? contains_loop<kPrefetch, kStore, BloomLayout::Cacheline512>(f, hashes, n, out)
             : contains_loop<kPrefetch, kStore, BloomLayout::ParquetSbbf>(f, hashes, n, out);
}

inline std::uint64_t bloom_contains(const detail::BloomRef& f, const std::uint64_t* hashes,
                                    std::size_t n, std::uint8_t* out) {
  const bool prefetch = filter_bytes(f) >= kPrefetchMinBytes;
  if (prefetch) {
    return out != nullptr ? contains_layout<true, true>(f, hashes, n, out)
                          : contains_layout<true, false>(f, hashes, n, out);
  }
  return out != nullptr ? contains_layout<false, true>(f, hashes, n, out)
                        : contains_layout<false, false>(f, hashes, n, out);
}

// cacheline512 add, k compiled in (no loop control between the probes).
//
// AVX-512: the key's 16-word mask is the OR of k lines of kCachelineBit (a
// 64-byte load each, combined three at a time by vpternlogd) and the block
// is written once. Other targets: k read-modify-writes of the block's words.
//
// Measured on the Emerald Rapids guest, k = 6, 256 KiB filter, one thread,
// M keys/s. Library, AVX3_DL, medians of 9 interleaved runs: table 250 vs
// read-modify-writes 209 pre-hashed, u64 190 vs 156, 16-byte strings 146 vs
// 128; 32 MiB 122 vs 115; 1 GiB alike (51.5, 51.4). The table's 32 KiB
// share L1 with the filter's lines; that cost is inside these figures.
// Microbenchmark, best of 15: table 322, read-modify-writes 224, and the
// floor, one 64-byte read-modify-write per random line with nothing else to
// do, ~620 (the bench's update probe). Slower: a mask built from the
// positions in registers (per probe a broadcast, a subtract and a variable
// shift: 1.3x slower than the read-modify-writes; or a broadcast, a compare
// and a masked OR per word group: 1.6x on AVX3, 5x on AVX2); a two-level
// table (a one-hot word line ANDed with a broadcast bit; 1.35x slower than
// the full one). Line offsets computed eight keys at a time in vectors pay
// only when computed a step ahead (add_cacheline_groups below). On AVX2 the
// table, as two 32-byte halves, was 1.1x faster in the microbenchmark but
// slower in the library (medians of 11 interleaved runs: pre-hashed 196 vs
// 216, u64 129 vs 159), so AVX2 keeps the read-modify-writes. Among their
// forms, every other position arithmetic measured as fast or slower: bit and
// word from lookup tables, positions from vectors stored for the scalar ORs
// (even a step ahead: alike in L1, 1.1x slower at 256 KiB), load/bts/store,
// lea addresses.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
inline constexpr bool kCachelineAddFromTable = true;
#else
inline constexpr bool kCachelineAddFromTable = false;
#endif

// Where probe i's line starts in kCachelineBit (one line per position).
HWY_INLINE std::uint32_t table_line_bytes(std::uint32_t x, std::uint32_t i) {
  return layout::cacheline_probe(x, i) * layout::kCachelineBytes;
}

// ORs the table lines at the given byte offsets (one per probe) into the
// block: the key's whole mask in registers, the block written once.
template <std::uint32_t kK>
HWY_INLINE void or_table_lines(std::uint32_t* block, const std::uint32_t* line_bytes) {
  const DBlock d;
  const char* table = reinterpret_cast<const char*>(kCachelineBit.word);
  for (std::size_t j = 0; j < layout::kCachelineWords; j += hn::Lanes(d)) {
    const auto part = [&](std::uint32_t i) {
      return hn::Load(d, reinterpret_cast<const std::uint32_t*>(table + line_bytes[i]) + j);
    };
    auto mask = part(0);
    std::uint32_t i = 1;
    for (; i + 1 < kK; i += 2) mask = hn::Or3(mask, part(i), part(i + 1));
    const auto old = hn::LoadU(d, block + j);
    hn::StoreU(i < kK ? hn::Or3(mask, part(i), old) : hn::Or(mask, old), d, block + j);
  }
}

template <std::uint32_t kK>
HWY_INLINE void cacheline_set(std::uint32_t* block, std::uint64_t h) {
  static_assert(kK >= 1 && kK <= layout::kMaxCachelineK);
  const auto x = static_cast<std::uint32_t>(h);
  if constexpr (kCachelineAddFromTable) {
    std::uint32_t line_bytes[kK];  // where probe i's table line starts
    for (std::uint32_t i = 0; i < kK; ++i) {
      line_bytes[i] = table_line_bytes(x, i);
    }
    or_table_lines<kK>(block, line_bytes);
  } else {
    for (std::uint32_t i = 0; i < kK; ++i) {
      // position = product >> 23 (layout::cacheline_probe): its word is
      // product >> 28, its bit the low five bits of the product rotated by
      // 23 (one rorx; the shift takes its count mod 32, so the mask is free).
      const std::uint32_t product = x * layout::bloom_salt(i);
      block[product >> 28] |= 1u << (std::rotr(product, 23) & 31);
    }
  }
}

HWY_INLINE void sbbf_set(std::uint32_t* block, std::uint64_t h) {
  const DSbbf d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  for (std::size_t p = 0; p < layout::kSbbfWords; p += hn::Lanes(d)) {
    hn::StoreU(hn::Or(hn::LoadU(d, block + p), sbbf_bits(d, x, p)), d, block + p);
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// AVX-512 cacheline512 add, eight keys per step, software-pipelined: the
// table offsets of the next eight keys' probes and their block offsets come
// from vector multiplies (vpmulld, vpmuludq) stored to a small buffer, while
// this step's keys OR their table lines into their blocks. Per key that
// leaves one scalar load per probe, where cacheline_set spends a scalar
// imul: those multiplies, all on one port, bounded the per-key loop (the
// step loop now mixes the two: kLoadedLineOffsets below). The
// buffer is written a whole step before it is read, so the reads never wait
// on a store still in flight: computed and read in the same step, it was
// 1.3x slower than the per-key loop. k = 6, pre-hashed keys, one thread,
// TSC cycles per key, best of 10 alternating runs of the library kernel on a
// 256 KiB filter: AVX3_DL 6.33 against 6.84, AVX3 6.44 against 6.84; with
// the filter in L1 (microbenchmark) 5.2 against 6.2. 32 MiB and 1 GiB
// filters measured alike.
inline constexpr std::size_t kAddGroup = 8;  // keys per step: one vector of hashes

// How many of a key's table-line offsets the step loop reads from the
// buffer; it computes the others from the hash with a scalar multiply. All
// loaded, the loads (k offsets, k table lines, the block and its offset) bound
// the loop on the load ports; all computed, the multiplies bound it on port 1.
// Balanced, (2k - 3) / 4 loaded: k = 6, pre-hashed keys, TSC cycles per key,
// best of 14 alternated runs, all loaded against 2 loaded: 16 KiB filter 6.12
// against 6.02, 256 KiB 6.98 against 6.41 (1 or 3 loaded: no better).
template <std::uint32_t kK>
inline constexpr std::uint32_t kLoadedLineOffsets = kK >= 2 ? (2 * kK - 3) / 4 : 0;
inline constexpr std::size_t kBufferedProbes = 8;  // probes 0-7: one key per half vector
static_assert(kLoadedLineOffsets<layout::kMaxCachelineK> <= kBufferedProbes);

struct AddGroupOffsets {
  // Key l's probes 0-7 at kBufferedProbes * l: two keys per vector multiply.
  alignas(64) std::uint32_t line_bytes[kAddGroup * kBufferedProbes];
  alignas(64) std::uint64_t block_bytes[kAddGroup];
};

template <std::uint32_t kK>
HWY_INLINE void add_group_offsets(const std::uint64_t* hashes, __m512i num_blocks,
                                  AddGroupOffsets& out) {
  const __m512i h = _mm512_loadu_si512(hashes);
  if constexpr (kLoadedLineOffsets<kK> != 0) {
    const __m512i salt = _mm512_broadcast_i32x8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt)));
    const __m512i line_of = _mm512_set1_epi32(~std::int32_t{63});
    for (int j = 0; j < 4; ++j) {
      const __m512i x = _mm512_permutexvar_epi32(key_pair_pick(j), h);  // hashes 2j, 2j + 1
      // (x * salt) >> 23 is the position; << 6 its line's byte offset.
      const __m512i line_bytes =
          _mm512_and_si512(_mm512_srli_epi32(_mm512_mullo_epi32(x, salt), 17), line_of);
      _mm512_store_si512(out.line_bytes + 2 * kBufferedProbes * j, line_bytes);
    }
  }
  // block_index(h) = ((h >> 32) * num_blocks) >> 32, times 64 bytes. vpmuludq
  // reads 32 bits of each: num_blocks < 2^32 (BloomFilter checks it).
  const __m512i block =
      _mm512_srli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(h, 32), num_blocks), 32);
  _mm512_store_si512(out.block_bytes, _mm512_slli_epi64(block, 6));
}

// Adds the first n - n % 8 keys; returns how many it added.
template <bool kPrefetch, std::uint32_t kK>
std::size_t add_cacheline_groups(const detail::BloomRef& f, const std::uint64_t* hashes,
                                 std::size_t n) {
  const std::size_t groups = n / kAddGroup;
  if (groups == 0) return 0;
  char* const words = reinterpret_cast<char*>(f.words);
  const __m512i num_blocks = _mm512_set1_epi64(static_cast<long long>(f.num_blocks));
  AddGroupOffsets offsets[2];
  if constexpr (kPrefetch) prefetch_first<true>(f, hashes, n);
  add_group_offsets<kK>(hashes, num_blocks, offsets[0]);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t i = g * kAddGroup;
    const AddGroupOffsets& now = offsets[g & 1];
    if (g + 1 < groups) add_group_offsets<kK>(hashes + i + kAddGroup, num_blocks, offsets[~g & 1]);
    prefetch_stream(hashes + i);
    for (std::size_t l = 0; l < kAddGroup; ++l) {
      if constexpr (kPrefetch) {
        if (i + l + kPrefetchDistance < n)
          prefetch_block<true>(f, hashes[i + l + kPrefetchDistance]);
      }
      char* block = words + now.block_bytes[l];
      asm("" : "+r"(block));  // one register for the block's address
      std::uint32_t line_bytes[kK];
      const auto x = static_cast<std::uint32_t>(hashes[i + l]);
      for (std::uint32_t p = 0; p < kK; ++p) {
        line_bytes[p] = p < kLoadedLineOffsets<kK> ? now.line_bytes[l * kBufferedProbes + p]
                                                   : table_line_bytes(x, p);
      }
      or_table_lines<kK>(reinterpret_cast<std::uint32_t*>(block), line_bytes);
    }
  }
  return groups * kAddGroup;
}
#else
template <bool kPrefetch, std::uint32_t kK>
std::size_t add_cacheline_groups(const detail::BloomRef&, const std::uint64_t*, std::size_t) {
  return 0;  // the per-key loop adds every key
}
#endif

// kK: the filter's k, compiled in (parquet_sbbf's is always 8).
template <bool kPrefetch, BloomLayout kLayout, std::uint32_t kK>
void add_loop(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n) {
  constexpr std::uint32_t kWords =
      kLayout == BloomLayout::Cacheline512 ? layout::kCachelineWords : layout::kSbbfWords;
  if constexpr (kLayout == BloomLayout::Cacheline512) {
    const std::size_t added = add_cacheline_groups<kPrefetch, kK>(f, hashes, n);
    hashes += added;
    n -= added;
  }
  std::uint32_t* const words = f.words;  // copies: the word stores may alias f
  const std::uint64_t num_blocks = f.num_blocks;
  if constexpr (kPrefetch) prefetch_first<true>(f, hashes, n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) {
      if (i + kPrefetchDistance < n) prefetch_block<true>(f, hashes[i + kPrefetchDistance]);
    }
    if (i % 8 == 0) prefetch_stream(hashes + i);
    const std::uint64_t h = hashes[i];
    std::uint32_t* block = words + layout::block_index(h, num_blocks) * kWords;
#if HWY_ARCH_X86
    // One register for the block's address, so that each probe's store
    // addresses block + 4 * word directly (GCC otherwise recomputes it with
    // an lea per probe from the filter base and the block offset).
    asm("" : "+r"(block));
#endif
    if constexpr (kLayout == BloomLayout::Cacheline512) {
      cacheline_set<kK>(block, h);
    } else {
      sbbf_set(block, h);
    }
  }
}

using AddLoop = void (*)(const detail::BloomRef&, const std::uint64_t*, std::size_t);

// cacheline512 add loops for k = 1..16 (index k - 1), k compiled in.
template <bool kPrefetch, std::uint32_t... kKs>
constexpr std::array<AddLoop, sizeof...(kKs)> cacheline_add_loops(
    std::integer_sequence<std::uint32_t, kKs...>) {
  return {&add_loop<kPrefetch, BloomLayout::Cacheline512, kKs + 1>...};
}

inline void bloom_add(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n) {
  static constexpr auto kCachelineLoops = cacheline_add_loops<false>(
      std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>());
  static constexpr auto kCachelinePrefetchLoops = cacheline_add_loops<true>(
      std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>());
  const bool prefetch = filter_bytes(f) >= kPrefetchMinBytes;
  if (f.layout == BloomLayout::Cacheline512) {
    return (prefetch ? kCachelinePrefetchLoops : kCachelineLoops)[f.k - 1](f, hashes, n);
  }
  return prefetch ? add_loop<true, BloomLayout::ParquetSbbf, layout::kSbbfK>(f, hashes, n)
                  : add_loop<false, BloomLayout::ParquetSbbf, layout::kSbbfK>(f, hashes, n);
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_INL_H_
