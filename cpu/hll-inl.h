// Per-target HyperLogLog register update (DESIGN.md §4): a vector of hashes
// reads its registers with one gather and decides in lanes whether any key
// raises its register; only then (after warm-up almost never) are registers
// written, by the layout functions, key by key.

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
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// The registers a vector of hashes lands on, read with one gather: each lane
// loads the aligned 8 bytes holding its register (in bounds, as m = 2^p is a
// multiple of 8) and shifts its byte down.
template <class D>
HWY_INLINE hn::Vec<D> gather_registers(D d, const std::uint8_t* registers, hn::Vec<D> index) {
  const hn::RebindToSigned<D> di;
  const auto offset = hn::And(index, hn::Set(d, ~std::uint64_t{7}));
  const auto eight = hn::GatherOffset(d, reinterpret_cast<const std::uint64_t*>(registers),
                                      hn::BitCast(di, offset));
  const auto byte_shift = hn::ShiftLeft<3>(hn::And(index, hn::Set(d, std::uint64_t{7})));
  return hn::And(hn::Shr(eight, byte_shift), hn::Set(d, std::uint64_t{0xff}));
}

HWY_INLINE void hll_update(std::uint8_t* registers, std::uint32_t p, std::uint64_t h) {
  const std::uint32_t j = layout::hll_index(h, p);
  const std::uint8_t r = layout::hll_rank(h, p);
  if (registers[j] < r) registers[j] = r;
}

// Gathers need 256-bit or wider vectors; SSE4/SSSE3 would emulate them.
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline constexpr bool kGatherRegisters = false;
#else
inline constexpr bool kGatherRegisters = true;
#endif

// A key raises register M iff rank > M, i.e. iff the bits above the index have
// at least M trailing zeros: (w & (2^M - 1)) == 0 with w = layout's rank input.
// That needs no trailing-zero count (Highway 1.0.3 has none): the rank is only
// computed, by the layout function, for the rare lanes that pass. With a floor
// (every register is at least that) the same test against it comes first and
// needs no gather: once the registers have grown, most vectors stop there.
template <bool kFloor>
void hll_add_loop(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                  std::size_t n, std::uint8_t floor) {
  const hn::ScalableTag<std::uint64_t> d;
  const std::size_t lanes = hn::Lanes(d);
  std::size_t i = 0;
  if constexpr (kGatherRegisters) {
    const auto index_mask = hn::Set(d, (std::uint64_t{1} << p) - 1);
    const auto sentinel = hn::Set(d, std::uint64_t{1} << (64 - p));
    const auto one = hn::Set(d, std::uint64_t{1});
    // The floor test reads w's low `floor` bits where the hash holds them, just
    // above the index (no shift): layout::hll_floor_screen, whose comment
    // says why it is exact at the top floor too.
    const auto floor_bits = hn::Set(d, layout::hll_floor_screen(p, floor));
    for (; i + lanes <= n; i += lanes) {
      prefetch_stream(hashes + i);  // pre-hashed keys come straight from memory
      const auto h = hn::LoadU(d, hashes + i);
      if constexpr (kFloor) {
        if (HWY_LIKELY(hn::AllFalse(d, hn::Eq(hn::And(h, floor_bits), hn::Zero(d))))) continue;
      }
      const auto w = hn::Or(hn::ShiftRightSame(h, static_cast<int>(p)), sentinel);
      const auto reg = gather_registers(d, registers, hn::And(h, index_mask));
      const auto below = hn::Sub(hn::Shl(one, reg), one);  // reg <= 65 - p < 64
      const auto raises = hn::Eq(hn::And(w, below), hn::Zero(d));
      if (HWY_LIKELY(hn::AllFalse(d, raises))) continue;
      // Lane by lane, so that two lanes on one register both count.
      for (std::size_t l = 0; l < lanes; ++l) hll_update(registers, p, hashes[i + l]);
    }
  }
  for (; i < n; ++i) hll_update(registers, p, hashes[i]);
}

inline void hll_add(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                    std::size_t n, std::uint8_t floor) {
  // A floor of 0 screens out nothing: skip the test.
  return floor > 0 ? hll_add_loop<true>(registers, p, hashes, n, floor)
                   : hll_add_loop<false>(registers, p, hashes, n, floor);
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_HLL_INL_H_
