// The type-erased key batch the backends receive.
#pragma once
#include <cstddef>
#include <cstdint>

namespace probkit::detail {

enum class KeyKind : std::uint8_t { U32, U64, Prehashed, Offsets32, Offsets64, Views };

// Arrow-style strings: n + 1 offsets in `keys`, the bytes in `data`.
inline bool has_offsets(KeyKind k) { return k == KeyKind::Offsets32 || k == KeyKind::Offsets64; }

struct KeyBatch {
  KeyKind kind = KeyKind::U64;
  std::size_t n = 0;             // number of keys
  const void* keys = nullptr;    // U32/U64/Prehashed: n values; Offsets*: n + 1 offsets;
                                 // Views: n std::string_view
  const std::uint8_t* data = nullptr;  // Offsets*: the string bytes
  std::size_t data_size = 0;
  std::uint8_t memory = 0;       // a probkit::KeyMemory value
  // Offsets* in host memory: 8 or 16 where the batch's check of its offsets
  // found every string that long (fixed-width keys), so that the kernels need
  // not scan each chunk's offsets to find so; 0 where not known.
  std::uint8_t fixed_width = 0;
  // Offsets* made with KeyMemory::Detect whose offsets were found in device
  // memory: their host check was skipped (the device checks them), and
  // memory stays Detect, so that the backend still finds where the bytes are
  // and which device holds both.
  bool offsets_on_device = false;
};

// Whether the batch's check found every string 16 bytes long (fixed_width):
// a batch-wide answer, so that a kernel that takes such strings (the AVX-512
// fused Bloom loops past the cache) takes every chunk of the batch or none.
inline bool is_string16_batch(const KeyBatch& keys) { return has_offsets(keys.kind) && keys.fixed_width == 16; }

}  // namespace probkit::detail
