// The key -> 64-bit hash step every backend shares (docs/FORMAT.md, "Keys and
// their hashes").
#pragma once
#include <cstddef>
#include <cstdint>

#include "probkit/layout/murmur64a.hpp"
#include "probkit/layout/xxh64.hpp"

namespace probkit {

// Which function turns a key's bytes into the 64-bit hash. Stored in every
// serialized filter and sketch: the numeric values are part of the format.
enum class HashKind : std::uint8_t {
  Xxh64 = 1,      // XXH64, the default
  Murmur64A = 2,  // MurmurHash64A, Redis's PFADD hash
};

struct HashSpec {
  HashKind kind = HashKind::Xxh64;
  std::uint64_t seed = 0;

  // Redis mode: MurmurHash64A with seed 0xadc83b19, exactly as PFADD hashes.
  static constexpr HashSpec redis() { return {HashKind::Murmur64A, layout::kRedisHllSeed}; }
  friend constexpr bool operator==(const HashSpec&, const HashSpec&) = default;
};

namespace layout {

PROBKIT_HD_INLINE std::uint64_t hash_bytes(HashSpec spec, const std::uint8_t* p, std::size_t len) {
  return spec.kind == HashKind::Murmur64A ? murmur64a(p, len, spec.seed) : xxh64(p, len, spec.seed);
}
PROBKIT_HD_INLINE std::uint64_t hash_u64(HashSpec spec, std::uint64_t key) {
  return spec.kind == HashKind::Murmur64A ? murmur64a_u64(key, spec.seed) : xxh64_u64(key, spec.seed);
}
PROBKIT_HD_INLINE std::uint64_t hash_u32(HashSpec spec, std::uint32_t key) {
  return spec.kind == HashKind::Murmur64A ? murmur64a_u32(key, spec.seed) : xxh64_u32(key, spec.seed);
}

}  // namespace layout
}  // namespace probkit
