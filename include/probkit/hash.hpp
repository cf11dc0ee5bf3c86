// Public hashing entry points: XXH64 (default, seed configurable) and
// MurmurHash64A (Redis mode), for bytes and fixed-width keys (the rule:
// docs/FORMAT.md, "Keys and their hashes").
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "probkit/layout/hash.hpp"

namespace probkit {

// nullptr would reach std::string_view's strlen and crash (C++23 deletes that
// string_view constructor too).
std::uint64_t hash(std::nullptr_t, HashSpec spec = {}) = delete;
inline std::uint64_t hash(std::string_view bytes, HashSpec spec = {}) {
  return layout::hash_bytes(spec, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}
inline std::uint64_t hash(std::uint64_t key, HashSpec spec = {}) { return layout::hash_u64(spec, key); }
inline std::uint64_t hash(std::uint32_t key, HashSpec spec = {}) { return layout::hash_u32(spec, key); }

}  // namespace probkit
