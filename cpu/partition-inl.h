// Per-target split of a chunk's hashes between two block owners (kernels.hpp:
// partition_hashes). AVX-512 only: each vector's lanes go out by the
// register form of vpcompressq and a whole-vector store at each side's end
// (the next store overwrites the lanes past it). Zen 5 guest, 1024 hashes in
// L1, TSC cycles per hash: 0.4 against the scalar reference's 2.0. Highway
// 1.0.3's own Compress for 64-bit lanes looks its indices up in a table that
// GCC builds on the stack at every call (13 cycles per hash here on AVX3_DL,
// 20 on AVX2, where the reference takes 2.0 and 4.3 with AVX2's slower
// hashing alongside), and its CompressStore uses the memory form of
// vpcompressq, microcoded on Zen 4: other targets keep the reference.

#if defined(PROBKIT_CPU_PARTITION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_PARTITION_INL_H_
#undef PROBKIT_CPU_PARTITION_INL_H_
#else
#define PROBKIT_CPU_PARTITION_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

inline std::size_t partition_hashes(const std::uint64_t* HWY_RESTRICT hashes, std::size_t n,
                                    std::uint64_t split, std::uint64_t* HWY_RESTRICT below,
                                    std::uint64_t* HWY_RESTRICT above) {
  const __m512i vsplit = _mm512_set1_epi64(static_cast<long long>(split));
  std::size_t nb = 0, na = 0;
  std::size_t i = 0;
  // Each store starts at or before lane i of its side, so ends by i + 8 <= n.
  for (; i + 8 <= n; i += 8) {
    const __m512i h = _mm512_loadu_si512(hashes + i);
    const __mmask8 is_below = _mm512_cmplt_epu64_mask(_mm512_srli_epi64(h, 32), vsplit);
    _mm512_storeu_si512(below + nb, _mm512_maskz_compress_epi64(is_below, h));
    _mm512_storeu_si512(above + na,
                        _mm512_maskz_compress_epi64(static_cast<__mmask8>(~is_below), h));
    const auto m = static_cast<std::size_t>(__builtin_popcount(is_below));
    nb += m;
    na += 8 - m;
  }
  for (; i < n; ++i) {
    const std::uint64_t h = hashes[i];
    if ((h >> 32) >= split) {
      above[na++] = h;
    } else {
      below[nb++] = h;
    }
  }
  return na;
}
inline constexpr auto kPartitionHashes = &partition_hashes;

#elif HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
inline constexpr std::size_t (*kPartitionHashes)(const std::uint64_t*, std::size_t, std::uint64_t,
                                                 std::uint64_t*, std::uint64_t*) = nullptr;
#endif

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
