// Per-target HyperLogLog register update (DESIGN.md §4): a vector of hashes
// reads its registers with one gather and decides in lanes whether any key
// raises its register; only then (after warm-up almost never) are registers
// written, with one scatter.

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

// A lane's register sits in the aligned 8 bytes that hold it (in bounds, as
// m = 2^p is a multiple of 8): the word at byte offset index & ~7, from bit
// 8 * (index & 7). Gathered and scattered a word per lane.
template <class D>
HWY_INLINE hn::Vec<hn::RebindToSigned<D>> word_offsets(D d, hn::Vec<D> index) {
  return hn::BitCast(hn::RebindToSigned<D>(), hn::And(index, hn::Set(d, ~std::uint64_t{7})));
}
template <class D>
HWY_INLINE hn::Vec<D> byte_shifts(D d, hn::Vec<D> index) {
  return hn::ShiftLeft<3>(hn::And(index, hn::Set(d, std::uint64_t{7})));
}
template <class D>
HWY_INLINE hn::Vec<D> gather_words(D d, const std::uint8_t* registers,
                                   hn::Vec<hn::RebindToSigned<D>> offsets) {
  return hn::GatherOffset(d, reinterpret_cast<const std::uint64_t*>(registers), offsets);
}
template <class D>
HWY_INLINE hn::Vec<D> register_of(D d, hn::Vec<D> words, hn::Vec<D> shifts) {
  return hn::And(hn::Shr(words, shifts), hn::Set(d, std::uint64_t{0xff}));
}

// layout::hll_rank of w = (h >> p) | sentinel, in lanes: one more than the
// trailing zeros of w (Highway 1.0.3 has no trailing-zero count), read off the
// exponent of w's lowest set bit converted to double, which is exact: a power
// of two no larger than the sentinel 2^(64 - p) <= 2^60.
template <class D>
HWY_INLINE hn::Vec<D> lane_ranks(D d, hn::Vec<D> w) {
  const hn::RebindToSigned<D> di;
  const hn::Repartition<double, D> df;
  const auto lowest = hn::And(w, hn::Sub(hn::Zero(d), w));
  const auto bits = hn::BitCast(d, hn::ConvertTo(df, hn::BitCast(di, lowest)));
  return hn::Sub(hn::ShiftRight<52>(bits), hn::Set(d, std::uint64_t{1022}));
}

HWY_INLINE void hll_update(std::uint8_t* registers, std::uint32_t p, std::uint64_t h) {
  const std::uint32_t j = layout::hll_index(h, p);
  const std::uint8_t r = layout::hll_rank(h, p);
  if (registers[j] < r) registers[j] = r;
}

// Bit l set iff lane l of the mask is.
template <class D>
HWY_INLINE std::uint64_t lane_bits(D d, hn::Mask<D> m) {
  static_assert(HWY_MAX_BYTES / sizeof(std::uint64_t) <= 64, "a lane mask must fit 64 bits");
  std::uint8_t bytes[8] = {};
  hn::StoreMaskBits(d, m, bytes);
  std::uint64_t bits = 0;
  for (std::size_t b = 0; b < sizeof(bytes); ++b) bits |= std::uint64_t{bytes[b]} << (8 * b);
  return bits;
}

// Gathers need 256-bit or wider vectors; SSE4/SSSE3 would emulate them.
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline constexpr bool kGatherRegisters = false;
#else
inline constexpr bool kGatherRegisters = true;
#endif

// A key raises register M iff rank > M, i.e. iff the bits above the index have
// at least M trailing zeros: (w & (2^M - 1)) == 0 with w = layout's rank input.
// That needs no rank: it is computed only for the vectors where a lane passes.
// With a floor (every register is at least that) the same test against it
// comes first and needs no gather: once the registers have grown, most vectors
// stop there.
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
      const auto index = hn::And(h, index_mask);
      const auto offsets = word_offsets(d, index);
      const auto shifts = byte_shifts(d, index);
      const auto words = gather_words(d, registers, offsets);
      const auto below =
          hn::Sub(hn::Shl(one, register_of(d, words, shifts)), one);  // reg <= 65 - p < 64
      const auto raises = hn::Eq(hn::And(w, below), hn::Zero(d));
      if (HWY_LIKELY(hn::AllFalse(d, raises))) continue;
      // While the registers are young most vectors get here. Each lane writes
      // its word back, its register raised to its rank if it raises. Two lanes
      // on one word undo each other's raise: the registers read back after the
      // scatter show which raising lanes fell short of their rank, and those
      // go again one by one (the scalar update takes the max). A byte then
      // holds the largest rank aimed at it, as every rank that raises exceeds
      // the byte as gathered. Updating all lanes of the vector one by one (as
      // this loop once did) made a fresh sketch's first 10^5 keys 2.4x slower
      // on AVX3_DL (see hll_add below).
      const auto rank = lane_ranks(d, w);
      const auto raised =
          hn::Or(hn::AndNot(hn::Shl(hn::Set(d, std::uint64_t{0xff}), shifts), words),
                 hn::Shl(rank, shifts));
      hn::ScatterOffset(hn::IfThenElse(raises, raised, words), d,
                        reinterpret_cast<std::uint64_t*>(registers), offsets);
      const auto now = register_of(d, gather_words(d, registers, offsets), shifts);
      const hn::RebindToSigned<decltype(d)> di;
      const auto lost =
          hn::And(raises, hn::RebindMask(d, hn::Lt(hn::BitCast(di, now), hn::BitCast(di, rank))));
      if (HWY_LIKELY(hn::AllFalse(d, lost))) continue;
      for (std::uint64_t todo = lane_bits(d, lost); todo != 0; todo &= todo - 1) {
        hll_update(registers, p, hashes[i + hwy::Num0BitsBelowLS1Bit_Nonzero64(todo)]);
      }
    }
  }
  for (; i < n; ++i) hll_update(registers, p, hashes[i]);
}

// Fresh sketch (p = 14), one add of 10^5 or 10^6 random u64 keys, XXH64, one
// thread, family 6 model 167 guest, TSC cycles per key, medians of 25, two
// runs of each build alternated:
//                      every lane   raising lanes only   scatter (this)
//   AVX3_DL, 10^5      13.0-13.2        9.7-10.0            5.3-5.6
//   AVX3_DL, 10^6       7.3-7.6         6.2-6.3             5.7-6.0
//   AVX2, 10^5         23.2-23.7       15.1-15.6           14.2-14.8
//   AVX2, 10^6         10.1-10.6        8.9-9.9             9.1-11.5
// Warm registers never reach the scatter; their rate did not move.
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
