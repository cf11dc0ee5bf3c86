// HyperLogLog register update (docs/FORMAT.md, "PKHL"), identical to Redis's
// PFADD for p = 14 and the Redis hash.
#pragma once
#include <cstdint>

#include "probkit/layout/bits.hpp"

namespace probkit::layout {

inline constexpr std::uint32_t kHllMinPrecision = 4;
inline constexpr std::uint32_t kHllMaxPrecision = 18;

PROBKIT_HD_INLINE std::uint32_t hll_index(std::uint64_t h, std::uint32_t p) {
  return static_cast<std::uint32_t>(h & ((std::uint64_t{1} << p) - 1));
}

// Rank: 1 + trailing zeros of the bits above the index, with a sentinel bit at
// 64 - p so that 1 <= rank <= 65 - p.
PROBKIT_HD_INLINE std::uint8_t hll_rank(std::uint64_t h, std::uint32_t p) {
  return static_cast<std::uint8_t>(ctz64((h >> p) | (std::uint64_t{1} << (64 - p))) + 1);
}

PROBKIT_HD_INLINE std::uint32_t hll_max_rank(std::uint32_t p) { return 65 - p; }

// The hash bits just above the index that a key's rank reads first: a key
// can only raise a register that is >= floor (0 < floor <= 65 - p) if all of
// these are zero, since its rank exceeds floor only if the bits above the
// index have at least `floor` trailing zeros. At floor = 65 - p the bits past
// 63 drop off, so the few keys that are zero above the index pass too (a
// superset: the exact test still decides). floor <= 61: both shifts are defined.
PROBKIT_HD_INLINE std::uint64_t hll_floor_screen(std::uint32_t p, std::uint32_t floor) {
  return ((std::uint64_t{1} << floor) - 1) << p;
}

}  // namespace probkit::layout
