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

#include <cstddef>
#include <cstdint>

#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"

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

template <bool kPrefetch, bool kStore, BloomLayout kLayout>
std::uint64_t contains_loop(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                            std::uint8_t* out) {
  constexpr std::uint32_t kWords =
      kLayout == BloomLayout::Cacheline512 ? layout::kCachelineWords : layout::kSbbfWords;
  const LiveProbes live(f.k);
  if constexpr (kPrefetch) prefetch_first<false>(f, hashes, n);
  std::uint64_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) {
      if (i + kPrefetchDistance < n) prefetch_block<false>(f, hashes[i + kPrefetchDistance]);
    }
    const std::uint64_t h = hashes[i];
    const std::uint32_t* block = f.words + layout::block_index(h, f.num_blocks) * kWords;
    bool hit;
    if constexpr (kLayout == BloomLayout::Cacheline512) {
      hit = cacheline_test(block, h, f.k, live);
    } else {
      hit = sbbf_test(block, h);
    }
    hits += hit;
    if constexpr (kStore) out[i] = hit;
  }
  return hits;
}

template <bool kPrefetch, bool kStore>
std::uint64_t contains_layout(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                              std::uint8_t* out) {
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

// cacheline512 add. All k positions come from one vector multiply; the bits are
// then ORed in word by word. (Gathering the k bits into a 16-word mask in
// registers costs a broadcast, a compare and a masked OR per probe per word
// group: measured 1.6x slower than these k read-modify-writes on AVX3, 5x on
// AVX2, 10x on SSE4.)
HWY_INLINE void cacheline_set(std::uint32_t* block, std::uint64_t h, std::uint32_t k) {
  const DBlock d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  HWY_ALIGN std::uint32_t pos[layout::kCachelineWords];
  for (std::size_t p = 0; p < k; p += hn::Lanes(d))
    hn::Store(cacheline_positions(d, x, p), d, pos + p);
  for (std::uint32_t i = 0; i < k; ++i) block[pos[i] >> 5] |= 1u << (pos[i] & 31);
}

HWY_INLINE void sbbf_set(std::uint32_t* block, std::uint64_t h) {
  const DSbbf d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  for (std::size_t p = 0; p < layout::kSbbfWords; p += hn::Lanes(d)) {
    hn::StoreU(hn::Or(hn::LoadU(d, block + p), sbbf_bits(d, x, p)), d, block + p);
  }
}

template <bool kPrefetch, BloomLayout kLayout>
void add_loop(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n) {
  constexpr std::uint32_t kWords =
      kLayout == BloomLayout::Cacheline512 ? layout::kCachelineWords : layout::kSbbfWords;
  if constexpr (kPrefetch) prefetch_first<true>(f, hashes, n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) {
      if (i + kPrefetchDistance < n) prefetch_block<true>(f, hashes[i + kPrefetchDistance]);
    }
    const std::uint64_t h = hashes[i];
    std::uint32_t* block = f.words + layout::block_index(h, f.num_blocks) * kWords;
    if constexpr (kLayout == BloomLayout::Cacheline512) {
      cacheline_set(block, h, f.k);
    } else {
      sbbf_set(block, h);
    }
  }
}

inline void bloom_add(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n) {
  const bool prefetch = filter_bytes(f) >= kPrefetchMinBytes;
  const bool cacheline = f.layout == BloomLayout::Cacheline512;
  if (prefetch) {
    return cacheline ? add_loop<true, BloomLayout::Cacheline512>(f, hashes, n)
                     : add_loop<true, BloomLayout::ParquetSbbf>(f, hashes, n);
  }
  return cacheline ? add_loop<false, BloomLayout::Cacheline512>(f, hashes, n)
                   : add_loop<false, BloomLayout::ParquetSbbf>(f, hashes, n);
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_INL_H_
