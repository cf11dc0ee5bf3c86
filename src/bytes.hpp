// Internal: little-endian byte writing and bounds-checked reading for the
// native formats (docs/FORMAT.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "probkit/error.hpp"
#include "probkit/layout/xxh64.hpp"

namespace probkit::detail {

class ByteWriter {
 public:
  explicit ByteWriter(std::size_t reserve) { out_.reserve(reserve); }
  void bytes(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  template <class T>
  void le(T v) {
    for (std::size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<std::uint8_t>(std::uint64_t(v) >> (8 * i)));
  }
  void zeros(std::size_t n) { out_.insert(out_.end(), n, 0); }
  // Appends XXH64 (seed 0) of everything written so far.
  std::vector<std::uint8_t> finish_with_checksum() {
    le(layout::xxh64(out_.data(), out_.size(), 0));
    return std::move(out_);
  }

 private:
  std::vector<std::uint8_t> out_;
};

template <class T>
T read_le(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) v |= std::uint64_t{p[i]} << (8 * i);
  return static_cast<T>(v);
}

// The checks every native blob starts with: a pointer, a length that holds at
// least the header and checksum, the 4-byte magic (which is also the format's
// name in messages), then the 2-byte version after it.
inline void check_native_prelude(std::span<const std::uint8_t> bytes, const char* magic,
                                 std::size_t header_bytes, std::uint16_t version, const char* what) {
  const std::string name(magic);
  if (bytes.data() == nullptr && !bytes.empty()) throw Error(name + ": null pointer with non-zero length");
  if (bytes.size() < header_bytes + 8) {
    throw Error(name + ": truncated: " + std::to_string(bytes.size()) + " bytes is shorter than the " +
                std::to_string(header_bytes + 8) + "-byte header and checksum");
  }
  if (std::memcmp(bytes.data(), magic, 4) != 0) throw Error(name + ": bad magic (not a probkit " + what + ")");
  const auto found = read_le<std::uint16_t>(bytes.data() + 4);
  if (found != version) {
    throw Error(name + ": unsupported format version " + std::to_string(found) + " (this build reads " +
                std::to_string(version) + ")");
  }
}

// Checks the trailing XXH64 of a native blob whose length is already validated.
inline void verify_checksum(std::span<const std::uint8_t> bytes, const char* format) {
  const std::size_t body = bytes.size() - 8;
  const std::uint64_t stored = read_le<std::uint64_t>(bytes.data() + body);
  const std::uint64_t actual = layout::xxh64(bytes.data(), body, 0);
  if (stored != actual) {
    throw Error(std::string(format) + ": checksum mismatch (the bytes are corrupted)");
  }
}

}  // namespace probkit::detail
