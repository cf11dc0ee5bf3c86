// The reference key-hashing loop: key kind -> 64-bit hashes via the layout
// functions. The scalar backend is this; SIMD backends use it for the kinds
// they do not vectorise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "probkit/detail/key_batch.hpp"
#include "probkit/layout/hash.hpp"

namespace probkit::detail {

template <class Offset>
inline void hash_strings(const Offset* offsets, const std::uint8_t* data, std::size_t begin,
                         std::size_t count, HashSpec spec, std::uint64_t* out) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto lo = static_cast<std::size_t>(offsets[begin + i]);
    const auto hi = static_cast<std::size_t>(offsets[begin + i + 1]);
    out[i] = layout::hash_bytes(spec, data + lo, hi - lo);
  }
}

inline void hash_keys_reference(const KeyBatch& keys, std::size_t begin, std::size_t count,
                                HashSpec spec, std::uint64_t* out) {
  switch (keys.kind) {
    case KeyKind::U32: {
      const auto* k = static_cast<const std::uint32_t*>(keys.keys) + begin;
      for (std::size_t i = 0; i < count; ++i) out[i] = layout::hash_u32(spec, k[i]);
      break;
    }
    case KeyKind::U64: {
      const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
      for (std::size_t i = 0; i < count; ++i) out[i] = layout::hash_u64(spec, k[i]);
      break;
    }
    case KeyKind::Prehashed: {
      const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
      for (std::size_t i = 0; i < count; ++i) out[i] = k[i];
      break;
    }
    case KeyKind::Offsets32:
      hash_strings(static_cast<const std::int32_t*>(keys.keys), keys.data, begin, count, spec, out);
      break;
    case KeyKind::Offsets64:
      hash_strings(static_cast<const std::int64_t*>(keys.keys), keys.data, begin, count, spec, out);
      break;
    case KeyKind::Views: {
      const auto* v = static_cast<const std::string_view*>(keys.keys) + begin;
      for (std::size_t i = 0; i < count; ++i) {
        out[i] = layout::hash_bytes(spec, reinterpret_cast<const std::uint8_t*>(v[i].data()),
                                    v[i].size());
      }
      break;
    }
  }
}

}  // namespace probkit::detail
