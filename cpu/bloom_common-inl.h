// Per-target pieces shared by the Bloom filter kernels (DESIGN.md §3):
// vector tags for a block, block prefetching for filters larger than the
// cache, and the probe arithmetic that contains and add both vectorise.
// Positions and salts are the layout's (layout/bloom.hpp).

#if defined(PROBKIT_CPU_BLOOM_COMMON_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_COMMON_INL_H_
#undef PROBKIT_CPU_BLOOM_COMMON_INL_H_
#else
#define PROBKIT_CPU_BLOOM_COMMON_INL_H_
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

HWY_INLINE std::uint64_t filter_bytes(const detail::BloomRef& f) {
  return f.num_blocks * layout::block_bytes(f.layout);
}

// Filters of detail::kBloomPrefetchMinBytes or more miss the cache: the
// kernels prefetch the block of the key this many keys ahead, so that many
// misses are in flight (kernels.hpp: bloom_prefetch_keys_ahead).
HWY_INLINE std::size_t prefetch_distance(const detail::BloomRef& f) {
  return detail::bloom_prefetch_keys_ahead(filter_bytes(f));
}

// How far ahead of the key it visits a kernel's loop prefetches blocks: into
// L1 l1 keys ahead, and where l2 is not 0, into L2 first, l2 keys ahead
// (kernels.hpp: bloom_l1_prefetch_keys_ahead says why).
struct BlockPrefetch {
  std::size_t l2 = 0;
  std::size_t l1 = 0;
  // The farthest of the two: how many keys ahead a key's block is first asked
  // for. Loops that hash their keys as they go (the AVX-512 fused loops for
  // filters past the cache) prefetch each key's block as its hash comes and
  // test or set the key this many keys later. (Each such loop issues its
  // prefetches itself: a shared helper for them changed the add's code and
  // read 0.93 of it at 32 MiB, and each key's two prefetches together read
  // 0.935 of the contains' step order at 1 GiB.)
  HWY_INLINE std::size_t farthest() const { return l2 != 0 ? l2 : l1; }
};
HWY_INLINE BlockPrefetch block_prefetch(const detail::BloomRef& f) {
  const std::size_t ahead = prefetch_distance(f);
  const std::size_t l1 = detail::bloom_l1_prefetch_keys_ahead(filter_bytes(f));
  return {l1 < ahead ? ahead : 0, l1};
}

HWY_INLINE const char* block_address(const detail::BloomRef& f, std::uint64_t h) {
  const std::uint64_t b = layout::block_index(h, f.num_blocks);
  return reinterpret_cast<const char*>(f.words + b * layout::block_words(f.layout));
}

template <bool kWrite>
HWY_INLINE void prefetch_block(const detail::BloomRef& f, std::uint64_t h) {
  const char* p = block_address(f, h);
#if HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  // Every CPU with AVX2 has PREFETCHW; Highway's target flags do not name it.
  if constexpr (kWrite) {
    asm volatile("prefetchw %0" : : "m"(*p));
    return;
  }
#endif
  hwy::Prefetch(p);
}

// Into L2 (prefetcht1 on x86), for a prefetch into L1 later: reads and writes alike.
HWY_INLINE void prefetch_block_to_l2(const detail::BloomRef& f, std::uint64_t h) {
  __builtin_prefetch(block_address(f, h), 0, 2);
}

// The prefetches of the loop's visit to key i: the blocks of keys i + d.l2
// (into L2) and i + d.l1 (into L1), those below `end` (the keys' count plus
// those ahead).
template <bool kWrite>
HWY_INLINE void prefetch_ahead(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t i,
                               std::size_t end, BlockPrefetch d) {
  if (d.l2 != 0 && i + d.l2 < end) prefetch_block_to_l2(f, hashes[i + d.l2]);
  if (i + d.l1 < end) prefetch_block<kWrite>(f, hashes[i + d.l1]);
}

// The first keys of a call have nobody ahead of them in it to prefetch their
// blocks: unless the call before carried them ahead (hashes[0, primed)),
// issue those misses together before the loop, so they overlap too: the
// first d.l1 keys' blocks into L1, the rest up to d.l2 into L2. `end`: the
// keys' count plus those ahead.
template <bool kWrite>
HWY_INLINE void prefetch_first(const detail::BloomRef& f, const std::uint64_t* hashes,
                               std::size_t primed, std::size_t end, BlockPrefetch d) {
  const std::size_t reach = d.farthest();
  const std::size_t m = end < reach ? end : reach;
  for (std::size_t i = primed; i < m; ++i) {
    if (i < d.l1) {
      prefetch_block<kWrite>(f, hashes[i]);
    } else {
      prefetch_block_to_l2(f, hashes[i]);
    }
  }
}

// cacheline512 probe positions a_i = (x * C[i]) >> 23 for probes p..p+N-1.
template <class D>
HWY_INLINE hn::Vec<D> cacheline_positions(D d, hn::Vec<D> x, std::size_t p) {
  return hn::ShiftRight<23>(hn::Mul(x, hn::LoadU(d, layout::kBloomSalt + p)));
}

// parquet_sbbf: word i gets bit (x * SALT[i]) >> 27.
template <class D>
HWY_INLINE hn::Vec<D> sbbf_bits(D d, hn::Vec<D> x, std::size_t p) {
  const auto shift = hn::ShiftRight<27>(hn::Mul(x, hn::LoadU(d, layout::kBloomSalt + p)));
  return hn::Shl(hn::Set(d, 1u), shift);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Indices for vpermd over a vector of eight hashes: the low 32 bits of hash
// 2j in lanes 0-7, of hash 2j+1 in lanes 8-15.
HWY_INLINE __m512i key_pair_pick(int j) {
  const int a = 4 * j, b = 4 * j + 2;
  return _mm512_set_epi32(b, b, b, b, b, b, b, b, a, a, a, a, a, a, a, a);
}
#endif

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_COMMON_INL_H_
