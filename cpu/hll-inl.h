// Per-target HyperLogLog register update (DESIGN.md §4). Index and rank of a
// vector of hashes are computed in lanes; the registers are then read one by
// one and written only when the rank raises one (after warm-up almost never, so
// the branch is predictable and the registers stay clean in cache).

#if defined(PROBKIT_CPU_HLL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_HLL_INL_H_
#undef PROBKIT_CPU_HLL_INL_H_
#else
#define PROBKIT_CPU_HLL_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "probkit/layout/hll.hpp"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// Rank = 1 + ctz of the bits above the index, with the sentinel bit at 64 - p
// (layout::hll_rank). Highway 1.0.3 has no TrailingZeroCount: the lowest set
// bit (at most 2^60) converts exactly to a double whose exponent is its ctz.
template <class D>
HWY_INLINE hn::Vec<D> hll_rank(D d, hn::Vec<D> h, std::uint32_t p) {
  const hn::RebindToSigned<D> di;
  const hn::Repartition<double, D> df;
  const auto above = hn::Or(hn::ShiftRightSame(h, static_cast<int>(p)),
                            hn::Set(d, std::uint64_t{1} << (64 - p)));
  const auto lowest = hn::And(above, hn::Sub(hn::Zero(d), above));
  const auto as_double = hn::BitCast(d, hn::ConvertTo(df, hn::BitCast(di, lowest)));
  return hn::Sub(hn::ShiftRight<52>(as_double), hn::Set(d, std::uint64_t{1023 - 1}));
}

inline void hll_add(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                    std::size_t n) {
  const hn::ScalableTag<std::uint64_t> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto index_mask = hn::Set(d, (std::uint64_t{1} << p) - 1);
  HWY_ALIGN std::uint64_t index[hn::MaxLanes(d)];
  HWY_ALIGN std::uint64_t rank[hn::MaxLanes(d)];
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto h = hn::LoadU(d, hashes + i);
    hn::Store(hn::And(h, index_mask), d, index);
    hn::Store(hll_rank(d, h, p), d, rank);
    for (std::size_t l = 0; l < lanes; ++l) {
      const auto r = static_cast<std::uint8_t>(rank[l]);
      if (registers[index[l]] < r) registers[index[l]] = r;
    }
  }
  for (; i < n; ++i) {
    const std::uint32_t j = layout::hll_index(hashes[i], p);
    const std::uint8_t r = layout::hll_rank(hashes[i], p);
    if (registers[j] < r) registers[j] = r;
  }
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_HLL_INL_H_
