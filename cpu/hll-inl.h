// Per-target HyperLogLog register update (DESIGN.md §4). How a key's register
// is best raised depends on how many keys raise one, which the kernel learns
// as it goes: while few do, a gather of each vector's registers finds the
// vectors with a key that raises; once many do, every key is raised without
// a look (a branch-free scalar max). A floor, the smallest register, screens
// out the keys whose rank cannot exceed it before any register is read.

#if defined(PROBKIT_CPU_HLL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_HLL_INL_H_
#undef PROBKIT_CPU_HLL_INL_H_
#else
#define PROBKIT_CPU_HLL_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "hash-inl.h"
#include "probkit/layout/hll.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// Stores whether or not the key raises: a branch on it mispredicts while the
// registers are young and about half the keys raise one.
HWY_INLINE void raise_register(std::uint8_t* registers, std::uint32_t p, std::uint64_t h) {
  const std::uint32_t j = layout::hll_index(h, p);
  const std::uint8_t rank = layout::hll_rank(h, p);
  const std::uint8_t now = registers[j];
  registers[j] = now > rank ? now : rank;
}

inline void raise_each(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                       std::size_t n) {
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    prefetch_stream(hashes + i);  // pre-hashed keys come straight from memory
    for (std::size_t l = 0; l < 8; ++l) raise_register(registers, p, hashes[i + l]);
  }
  for (; i < n; ++i) raise_register(registers, p, hashes[i]);
}

// Gathers need 256-bit or wider vectors; SSE4/SSSE3 would emulate them.
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline void raise_keys(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                       std::size_t n) {
  raise_each(registers, p, hashes, n);
}
#else
// Whether a key of vector h raises its register. A register sits in the
// aligned 8 bytes that hold it (in bounds, as m = 2^p is a multiple of 8),
// gathered a word per lane. A key raises register M iff rank > M, i.e. iff
// the bits above the index have at least M trailing zeros: (w & (2^M - 1)) ==
// 0 with w = the layout's rank input, so no rank is computed.
template <class D>
HWY_INLINE bool any_raises(D d, const std::uint8_t* registers, std::uint32_t p, hn::Vec<D> h) {
  const hn::RebindToSigned<D> di;
  const auto one = hn::Set(d, std::uint64_t{1});
  const auto index = hn::And(h, hn::Set(d, (std::uint64_t{1} << p) - 1));
  const auto offsets = hn::BitCast(di, hn::And(index, hn::Set(d, ~std::uint64_t{7})));
  const auto words =
      hn::GatherOffset(d, reinterpret_cast<const std::uint64_t*>(registers), offsets);
  const auto shifts = hn::ShiftLeft<3>(hn::And(index, hn::Set(d, std::uint64_t{7})));
  const auto reg = hn::And(hn::Shr(words, shifts), hn::Set(d, std::uint64_t{0xff}));
  const auto below = hn::Sub(hn::Shl(one, reg), one);  // reg <= 65 - p < 64
  const auto w =
      hn::Or(hn::ShiftRightSame(h, static_cast<int>(p)), hn::Set(d, std::uint64_t{1} << (64 - p)));
  return !hn::AllFalse(d, hn::Eq(hn::And(w, below), hn::Zero(d)));
}

// Checks a vector at a time and raises the keys of those where one raises.
// Each vector checked earns a credit and each one that raises costs four:
// once more than about a quarter of the vectors raise, checking no longer
// pays and the rest of the keys are raised without it. Both kinds of calls
// come in runs (a young sketch, then a warm one; keys seen before, or not),
// so each call starts over with a check.
inline void raise_keys(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                       std::size_t n) {
  const hn::ScalableTag<std::uint64_t> d;
  const std::size_t lanes = hn::Lanes(d);
  constexpr std::ptrdiff_t kCostPerRaise = 4, kSlack = 2 * kCostPerRaise;
  std::ptrdiff_t credit = kSlack;
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    prefetch_stream(hashes + i);
    ++credit;
    if (HWY_LIKELY(!any_raises(d, registers, p, hn::LoadU(d, hashes + i)))) continue;
    for (std::size_t l = 0; l < lanes; ++l) raise_register(registers, p, hashes[i + l]);
    credit -= kCostPerRaise;
    if (credit < 0) {
      i += lanes;
      break;
    }
  }
  raise_each(registers, p, hashes + i, n - i);
}
#endif

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// The keys that pass the screen are packed (vpcompressq, append_passing) into
// a small buffer and raised a buffer at a time. Where few vectors have a
// passing key (kSkip), a branch skips the others.
template <bool kSkip>
inline void raise_passing(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                          std::size_t n, std::uint64_t screen) {
  constexpr std::size_t kBuffer = 256;
  std::uint64_t passed[kBuffer + 8];  // append_passing stores a whole vector
  const D64 d;
  const V64 screen_v = hn::Set(d, screen);
  std::size_t m = 0, i = 0;
  for (; i + 8 <= n; i += 8) {
    prefetch_stream(hashes + i);
    const V64 h = hn::LoadU(d, hashes + i);
    if (kSkip && HWY_LIKELY(hn::AllFalse(d, hn::Eq(hn::And(h, screen_v), hn::Zero(d))))) continue;
    m = append_passing(h, screen_v, passed, m);
    if (m >= kBuffer) {
      raise_keys(registers, p, passed, m);
      m = 0;
    }
  }
  raise_keys(registers, p, passed, m);
  raise_each(registers, p, hashes + i, n - i);  // the tail, unscreened
}

inline void raise_screened(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                           std::size_t n, std::uint8_t floor) {
  const std::uint64_t screen = layout::hll_floor_screen(p, floor);
  if (skip_pays(floor)) return raise_passing<true>(registers, p, hashes, n, screen);
  raise_passing<false>(registers, p, hashes, n, screen);
}
#else
// Highway 1.0.3's 64-bit Compress measured slower than the whole update on
// AVX2. Where few vectors have a key that passes, those keys are raised one
// by one; elsewhere the registers decide, as for keys with no floor. (On AVX2
// this screens pre-hashed keys: hash_screened screens keys it hashes.)

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

inline void raise_screened(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                           std::size_t n, std::uint8_t floor) {
  if (!skip_pays(floor)) return raise_keys(registers, p, hashes, n);
  const hn::ScalableTag<std::uint64_t> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto screen = hn::Set(d, layout::hll_floor_screen(p, floor));
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    prefetch_stream(hashes + i);
    const auto pass = hn::Eq(hn::And(hn::LoadU(d, hashes + i), screen), hn::Zero(d));
    if (HWY_LIKELY(hn::AllFalse(d, pass))) continue;
    for (std::uint64_t todo = lane_bits(d, pass); todo != 0; todo &= todo - 1) {
      raise_register(registers, p, hashes[i + hwy::Num0BitsBelowLS1Bit_Nonzero64(todo)]);
    }
  }
  raise_each(registers, p, hashes + i, n - i);
}
#endif

// Every register is at least `floor`: a key whose rank cannot exceed it
// changes nothing (layout::hll_floor_screen).
//
// Gathering a vector's registers and raising its keys only where one raises
// beats gathering every key and scattering the raised registers back, most
// on AVX2, which has no scatter (Highway stores a lane at a time): 10^5 keys
// into a fresh sketch, 18.1-18.2 -> 10.8-10.9 TSC cycles per key on the
// family 6 model 167 guest (Intel, AVX2 pinned), whose gathers are slow.
// (docs/PERF-NOTES.md, "HLL update against gather and scatter")
inline void hll_add(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                    std::size_t n, std::uint8_t floor) {
  if (floor > 0) return raise_screened(registers, p, hashes, n, floor);
  raise_keys(registers, p, hashes, n);
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_HLL_INL_H_
