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

}  // namespace probkit::detail
