// Per-target check of a string batch's offsets (kernels.hpp: check_offsets).
// It is a pass over the whole offsets array before any key is hashed, so a
// cold batch pays its memory traffic once more: full vectors keep more loads
// in flight than the baseline's 4-lane (int32) or scalar (int64) loop, which
// ran at 0.6 and 1.4 ns per cold offset against 0.4 and 0.8 here (AVX3).

#if defined(PROBKIT_CPU_OFFSETS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_OFFSETS_INL_H_
#undef PROBKIT_CPU_OFFSETS_INL_H_
#else
#define PROBKIT_CPU_OFFSETS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "probkit/detail/kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// Lanes turn all-ones in `bad` where an offset exceeds the limit or falls
// below its predecessor (the unaligned load one element back); with kWidth,
// nonzero in `differ` where the string they bound is not `width` long
// (lengths in wrapping lane arithmetic: offsets out of order may be any
// values).
template <bool kWidth, class D, class Offset>
HWY_INLINE void offsets_step(D d, const Offset* HWY_RESTRICT at, hn::Vec<D> limit, hn::Vec<D> width,
                             hn::Vec<D>& bad, hn::Vec<D>& differ) {
  const auto v = hn::LoadU(d, at);
  const auto before = hn::LoadU(d, at - 1);
  bad = hn::Or(bad, hn::VecFromMask(d, hn::Or(hn::Gt(v, limit), hn::Lt(v, before))));
  if constexpr (kWidth) differ = hn::Or(differ, hn::Xor(hn::Sub(v, before), width));
}

// Offsets [i, end) a whole vector at a time, two vectors a step; leaves i
// at the first offset not checked (fewer than a vector before end).
template <bool kWidth, class D, class Offset>
HWY_INLINE void offsets_steps(D d, const Offset* HWY_RESTRICT off, std::size_t& i, std::size_t end,
                              hn::Vec<D> limit, hn::Vec<D> width, hn::Vec<D>& bad0,
                              hn::Vec<D>& bad1, hn::Vec<D>& differ0, hn::Vec<D>& differ1) {
  const std::size_t lanes = hn::Lanes(d);
  for (; i + 2 * lanes <= end; i += 2 * lanes) {
    offsets_step<kWidth>(d, off + i, limit, width, bad0, differ0);
    offsets_step<kWidth>(d, off + i + lanes, limit, width, bad1, differ1);
  }
  if (i + lanes <= end) {
    offsets_step<kWidth>(d, off + i, limit, width, bad0, differ0);
    i += lanes;
  }
}

// The lengths are compared only where the first is 8 or 16 (the widths the
// kernels take, KeyBatch::fixed_width), and only until two differ: a block
// of offsets at a time, then the rest without. So a batch of other strings
// costs the check what it cost before it looked for fixed widths; a batch of
// them, two vector operations more per vector.
template <class Offset>
detail::OffsetsCheck check_offsets_typed(const Offset* HWY_RESTRICT off, std::size_t count,
                                         Offset limit) {
  using U = std::make_unsigned_t<Offset>;
  if (count == 0) return {true, 0};
  const hn::ScalableTag<Offset> d;
  const std::size_t lanes = hn::Lanes(d);
  const U width = count > 1 ? static_cast<U>(static_cast<U>(off[1]) - static_cast<U>(off[0])) : 0;
  const auto vlimit = hn::Set(d, limit);
  const auto vwidth = hn::Set(d, static_cast<Offset>(width));
  auto bad0 = hn::Zero(d), bad1 = hn::Zero(d), differ0 = hn::Zero(d), differ1 = hn::Zero(d);
  bool same = width == 8 || width == 16;
  std::size_t i = 1;  // off[0] has no predecessor: checked below
  const std::size_t block = 64 * lanes;
  while (same && i + block <= count) {
    offsets_steps<true>(d, off, i, i + block, vlimit, vwidth, bad0, bad1, differ0, differ1);
    same = hn::AllTrue(d, hn::Eq(hn::Or(differ0, differ1), hn::Zero(d)));
  }
  if (same) {
    offsets_steps<true>(d, off, i, count, vlimit, vwidth, bad0, bad1, differ0, differ1);
    same = hn::AllTrue(d, hn::Eq(hn::Or(differ0, differ1), hn::Zero(d)));
  } else {
    offsets_steps<false>(d, off, i, count, vlimit, vwidth, bad0, bad1, differ0, differ1);
  }
  bool ok = off[0] <= limit && hn::AllFalse(d, hn::MaskFromVec(hn::Or(bad0, bad1)));
  for (; i < count; ++i) {
    ok &= off[i] <= limit && off[i] >= off[i - 1];
    same &= static_cast<U>(static_cast<U>(off[i]) - static_cast<U>(off[i - 1])) == width;
  }
  return {ok, static_cast<std::uint8_t>(ok && same ? width : 0)};
}

inline detail::OffsetsCheck check_offsets(const void* offsets, bool wide, std::size_t count,
                                          std::int64_t limit) {
  if (wide) return check_offsets_typed(static_cast<const std::int64_t*>(offsets), count, limit);
  return check_offsets_typed(static_cast<const std::int32_t*>(offsets), count,
                             static_cast<std::int32_t>(limit));
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // include guard
