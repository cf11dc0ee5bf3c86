// Per-target blocked Bloom filter contains (DESIGN.md §3): which loop tests a
// call's keys. The loops: bloom_contains_generic-inl.h (every target, one key
// at a time), bloom_contains_avx512-inl.h and bloom_contains_avx2-inl.h.
// tests/simd_bloom_kernels_test.cc proves identity with the scalar reference.

#if defined(PROBKIT_CPU_BLOOM_CONTAINS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_CONTAINS_INL_H_
#undef PROBKIT_CPU_BLOOM_CONTAINS_INL_H_
#else
#define PROBKIT_CPU_BLOOM_CONTAINS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "bloom_common-inl.h"
#include "bloom_contains_avx2-inl.h"
#include "bloom_contains_avx512-inl.h"
#include "bloom_contains_generic-inl.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

#if HWY_TARGET != HWY_AVX2 && HWY_TARGET != HWY_AVX3 && HWY_TARGET != HWY_AVX3_DL
// No kernels of their own: every filter goes by contains_loop.
inline constexpr std::uint32_t kCachelineKernelMaxK = 0;
template <bool kPrefetch, bool kStore>
std::uint64_t contains_cacheline_kernel(const detail::BloomRef&, const std::uint64_t*, std::size_t,
                                        detail::BloomLookahead, std::uint8_t*) {
  return 0;  // never called: kCachelineKernelMaxK is 0
}
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
