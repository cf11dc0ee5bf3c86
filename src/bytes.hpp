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
