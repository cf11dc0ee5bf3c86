// MurmurHash64A (Austin Appleby), as Redis uses it to hash PFADD elements
// (redis/src/hyperloglog.c): little-endian 8-byte blocks, tail bytes xored
// from the highest down, seed 0xadc83b19 in Redis.
#pragma once
#include <cstddef>
#include <cstdint>

#include "probkit/layout/bits.hpp"

namespace probkit::layout {

inline constexpr std::uint64_t kMurmurM = 0xc6a4a7935bd1e995ULL;
inline constexpr int kMurmurR = 47;
inline constexpr std::uint64_t kRedisHllSeed = 0xadc83b19ULL;

PROBKIT_HD_INLINE std::uint64_t murmur64a_block(std::uint64_t h, std::uint64_t k) {
  k *= kMurmurM;
  k ^= k >> kMurmurR;
  k *= kMurmurM;
  h ^= k;
  return h * kMurmurM;
}

PROBKIT_HD_INLINE std::uint64_t murmur64a_finish(std::uint64_t h) {
  h ^= h >> kMurmurR;
  h *= kMurmurM;
  h ^= h >> kMurmurR;
  return h;
}

PROBKIT_HD_INLINE std::uint64_t murmur64a(const std::uint8_t* p, std::size_t len,
                                          std::uint64_t seed) {
  std::uint64_t h = seed ^ (std::uint64_t{len} * kMurmurM);  // size_t may be narrower: widened, never cast
  const std::size_t blocks = len / 8;
  for (std::size_t i = 0; i < blocks; ++i) h = murmur64a_block(h, load_le64(p + 8 * i));
  const std::uint8_t* tail = p + 8 * blocks;
  const std::size_t rest = len & 7;
  if (rest != 0) {
    for (std::size_t i = rest; i-- > 0;) h ^= std::uint64_t{tail[i]} << (8 * i);
    h *= kMurmurM;
  }
  return murmur64a_finish(h);
}

PROBKIT_HD_INLINE std::uint64_t murmur64a_u64(std::uint64_t key, std::uint64_t seed) {
  return murmur64a_finish(murmur64a_block(seed ^ (8 * kMurmurM), key));
}
PROBKIT_HD_INLINE std::uint64_t murmur64a_u32(std::uint32_t key, std::uint64_t seed) {
  return murmur64a_finish((seed ^ (4 * kMurmurM) ^ key) * kMurmurM);
}

}  // namespace probkit::layout
