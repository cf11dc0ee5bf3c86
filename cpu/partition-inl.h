// Per-target split of a chunk's hashes between two block owners (kernels.hpp:
// partition_hashes). Each vector's lanes go to both sides: on AVX-512 by
// append_lanes (hash-inl.h), the register form of vpcompressq; on AVX2 by
// vpermd with indices from a table of the 16 masks of four lanes. Zen 5
// guest, 1024 hashes in L1, medians of 2000 calls: AVX-512 0.69 TSC cycles
// per hash against the scalar reference's 1.57; measured again with the AVX2
// form, in another program: AVX2 0.61, AVX-512 0.30, the reference 1.22. Two
// workers adding u64 keys into 1 GiB, AVX2 pinned: 304.1 -> 315.0 M keys/s
// (medians of 8 alternated rounds; the ideal's row, code alike, 1.009).
// Highway 1.0.3's own Compress (see append_lanes) took 13 cycles per hash on
// AVX3_DL and 17-21 on AVX2 (the hashing of the same chunk subtracted),
// against 1.3-2.1 for the reference.
// Other targets (SSE4, NEON, SVE: never measured) keep the reference.

#if defined(PROBKIT_CPU_PARTITION_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_PARTITION_INL_H_
#undef PROBKIT_CPU_PARTITION_INL_H_
#else
#define PROBKIT_CPU_PARTITION_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "hash-inl.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// One vector of hashes to both sides: vpcompressq into registers.
class VectorSplit {
 public:
  static constexpr std::size_t kLanes = 8;
  explicit VectorSplit(std::uint64_t split)
      : split_(_mm512_set1_epi64(static_cast<long long>(split))) {}
  HWY_INLINE void append(const std::uint64_t* hashes, std::uint64_t* HWY_RESTRICT below,
                         std::uint64_t* HWY_RESTRICT above, std::size_t& nbelow,
                         std::size_t& nabove) const {
    const __m512i h = _mm512_loadu_si512(hashes);
    const __mmask8 is_below = _mm512_cmplt_epu64_mask(_mm512_srli_epi64(h, 32), split_);
    nbelow = append_lanes(is_below, h, below, nbelow);
    nabove = append_lanes(static_cast<__mmask8>(~is_below), h, above, nabove);
  }

 private:
  __m512i split_;
};

#elif HWY_TARGET == HWY_AVX2

// The vpermd indices that move the 64-bit lanes a 4-bit mask selects to the
// front, in order (the rest: lane 0, garbage the next append overwrites).
struct PartitionTable {
  alignas(32) std::int32_t idx[16][8];
};
inline constexpr PartitionTable kPartitionTable = [] {
  PartitionTable t{};
  for (int m = 0; m < 16; ++m) {
    int out = 0;
    for (int j = 0; j < 4; ++j) {
      if ((m >> j) & 1) {
        t.idx[m][2 * out] = 2 * j;
        t.idx[m][2 * out + 1] = 2 * j + 1;
        ++out;
      }
    }
  }
  return t;
}();

// One vector of hashes to both sides: vpermd with the mask's indices, each
// side stored whole.
class VectorSplit {
 public:
  static constexpr std::size_t kLanes = 4;
  // h >> 32 and split (<= 2^32) are non-negative as signed 64-bit lanes.
  explicit VectorSplit(std::uint64_t split)
      : split_(_mm256_set1_epi64x(static_cast<long long>(split))) {}
  HWY_INLINE void append(const std::uint64_t* hashes, std::uint64_t* HWY_RESTRICT below,
                         std::uint64_t* HWY_RESTRICT above, std::size_t& nbelow,
                         std::size_t& nabove) const {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hashes));
    const __m256i is_below = _mm256_cmpgt_epi64(split_, _mm256_srli_epi64(h, 32));
    const unsigned m = static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(is_below)));
    const __m256i to_below = _mm256_permutevar8x32_epi32(
        h, _mm256_load_si256(reinterpret_cast<const __m256i*>(kPartitionTable.idx[m])));
    const __m256i to_above = _mm256_permutevar8x32_epi32(
        h, _mm256_load_si256(reinterpret_cast<const __m256i*>(kPartitionTable.idx[m ^ 15])));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(below + nbelow), to_below);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(above + nabove), to_above);
    const std::size_t b = static_cast<std::size_t>(__builtin_popcount(m));
    nbelow += b;
    nabove += kLanes - b;
  }

 private:
  __m256i split_;
};

#endif

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2

HWY_INLINE std::size_t partition_hashes(const std::uint64_t* HWY_RESTRICT hashes, std::size_t n,
                                        std::uint64_t split, std::uint64_t* HWY_RESTRICT below,
                                        std::uint64_t* HWY_RESTRICT above) {
  const VectorSplit vector_split(split);
  constexpr std::size_t kLanes = VectorSplit::kLanes;
  std::size_t nbelow = 0, nabove = 0;
  std::size_t i = 0;
  // Each side's append starts at or before lane i, so its store ends by
  // i + kLanes <= n: within the room the contract gives.
  for (; i + kLanes <= n; i += kLanes)
    vector_split.append(hashes + i, below, above, nbelow, nabove);
  // The last n % kLanes, branch-free as in the reference (scalar.cc).
  for (; i < n; ++i) {
    const std::uint64_t h = hashes[i];
    const bool up = (h >> 32) >= split;
    below[nbelow] = h;
    above[nabove] = h;
    nbelow += up ? 0 : 1;
    nabove += up ? 1 : 0;
  }
  return nabove;
}
inline constexpr auto kPartitionHashes = &partition_hashes;

#elif HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
inline constexpr std::size_t (*kPartitionHashes)(const std::uint64_t*, std::size_t, std::uint64_t,
                                                 std::uint64_t*, std::uint64_t*) = nullptr;
#endif

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
