// XXH64 (Yann Collet's xxHash, 64-bit variant), written from the published
// specification (xxhash/doc/xxhash_spec.md). Must equal libxxhash's XXH64()
// bit for bit; tests/hash_test.cc checks it against the library.
#pragma once
#include <cstddef>
#include <cstdint>

#include "probkit/layout/bits.hpp"

namespace probkit::layout {

inline constexpr std::uint64_t kXxhPrime1 = 0x9E3779B185EBCA87ULL;
inline constexpr std::uint64_t kXxhPrime2 = 0xC2B2AE3D27D4EB4FULL;
inline constexpr std::uint64_t kXxhPrime3 = 0x165667B19E3779F9ULL;
inline constexpr std::uint64_t kXxhPrime4 = 0x85EBCA77C2B2AE63ULL;
inline constexpr std::uint64_t kXxhPrime5 = 0x27D4EB2F165667C5ULL;

PROBKIT_HD_INLINE std::uint64_t xxh64_round(std::uint64_t acc, std::uint64_t input) {
  acc += input * kXxhPrime2;
  acc = rotl64(acc, 31);
  return acc * kXxhPrime1;
}

PROBKIT_HD_INLINE std::uint64_t xxh64_merge_round(std::uint64_t acc, std::uint64_t val) {
  acc ^= xxh64_round(0, val);
  return acc * kXxhPrime1 + kXxhPrime4;
}

PROBKIT_HD_INLINE std::uint64_t xxh64_avalanche(std::uint64_t h) {
  h ^= h >> 33;
  h *= kXxhPrime2;
  h ^= h >> 29;
  h *= kXxhPrime3;
  h ^= h >> 32;
  return h;
}

// Steps shared by every input: one 8-byte lane and one 4-byte lane of the tail.
PROBKIT_HD_INLINE std::uint64_t xxh64_tail8(std::uint64_t h, std::uint64_t lane) {
  h ^= xxh64_round(0, lane);
  return rotl64(h, 27) * kXxhPrime1 + kXxhPrime4;
}
PROBKIT_HD_INLINE std::uint64_t xxh64_tail4(std::uint64_t h, std::uint32_t lane) {
  h ^= std::uint64_t{lane} * kXxhPrime1;
  return rotl64(h, 23) * kXxhPrime2 + kXxhPrime3;
}
PROBKIT_HD_INLINE std::uint64_t xxh64_tail1(std::uint64_t h, std::uint8_t byte) {
  h ^= std::uint64_t{byte} * kXxhPrime5;
  return rotl64(h, 11) * kXxhPrime1;
}

// The four stripe lanes folded into one (inputs of 32 bytes or more).
PROBKIT_HD_INLINE std::uint64_t xxh64_merge_lanes(std::uint64_t v1, std::uint64_t v2, std::uint64_t v3,
                                                  std::uint64_t v4) {
  std::uint64_t h = rotl64(v1, 1) + rotl64(v2, 7) + rotl64(v3, 12) + rotl64(v4, 18);
  h = xxh64_merge_round(h, v1);
  h = xxh64_merge_round(h, v2);
  h = xxh64_merge_round(h, v3);
  return xxh64_merge_round(h, v4);
}

// After the stripes: h (merged lanes, or seed + prime 5 for short inputs) with
// the total length added, then the `n` < 32 tail bytes at `p` and the avalanche.
PROBKIT_HD_INLINE std::uint64_t xxh64_finish(std::uint64_t h, std::uint64_t len, const std::uint8_t* p, std::size_t n) {
  const std::uint8_t* const end = p + n;
  h += len;
  while (end - p >= 8) {
    h = xxh64_tail8(h, load_le64(p));
    p += 8;
  }
  if (end - p >= 4) {
    h = xxh64_tail4(h, load_le32(p));
    p += 4;
  }
  while (p < end) h = xxh64_tail1(h, *p++);
  return xxh64_avalanche(h);
}

// XXH64 of `len` bytes at `p`.
PROBKIT_HD_INLINE std::uint64_t xxh64(const std::uint8_t* p, std::size_t len, std::uint64_t seed) {
  const std::uint8_t* const end = p + len;
  std::uint64_t h = 0;
  if (len >= 32) {
    std::uint64_t v1 = seed + kXxhPrime1 + kXxhPrime2;
    std::uint64_t v2 = seed + kXxhPrime2;
    std::uint64_t v3 = seed;
    std::uint64_t v4 = seed - kXxhPrime1;
    const std::uint8_t* const limit = end - 32;
    do {
      v1 = xxh64_round(v1, load_le64(p));
      v2 = xxh64_round(v2, load_le64(p + 8));
      v3 = xxh64_round(v3, load_le64(p + 16));
      v4 = xxh64_round(v4, load_le64(p + 24));
      p += 32;
    } while (p <= limit);
    h = xxh64_merge_lanes(v1, v2, v3, v4);
  } else {
    h = seed + kXxhPrime5;
  }
  return xxh64_finish(h, len, p, static_cast<std::size_t>(end - p));
}

// Fixed-width keys, hashed as their little-endian bytes (docs/FORMAT.md).
PROBKIT_HD_INLINE std::uint64_t xxh64_u64(std::uint64_t key, std::uint64_t seed) {
  return xxh64_avalanche(xxh64_tail8(seed + kXxhPrime5 + 8, key));
}
PROBKIT_HD_INLINE std::uint64_t xxh64_u32(std::uint32_t key, std::uint64_t seed) {
  return xxh64_avalanche(xxh64_tail4(seed + kXxhPrime5 + 4, key));
}

}  // namespace probkit::layout
