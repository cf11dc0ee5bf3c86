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
  std::vector<std::uint8_t> take() { return std::move(out_); }
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

// The 4-byte magic (which is also the format's name in messages), then the
// 2-byte version after it, of a header of at least 6 bytes.
inline void check_magic_and_version(const std::uint8_t* header, const char* magic, std::uint16_t version,
                                    const char* what) {
  const std::string name(magic);
  if (std::memcmp(header, magic, 4) != 0) throw Error(name + ": bad magic (not a probkit " + what + ")");
  const auto found = read_le<std::uint16_t>(header + 4);
  if (found != version) {
    throw Error(name + ": unsupported format version " + std::to_string(found) + " (this build reads " +
                std::to_string(version) + ")");
  }
}

// The checks every native blob starts with: a pointer, a length that holds at
// least the header and checksum, then the magic and version.
inline void check_native_prelude(std::span<const std::uint8_t> bytes, const char* magic,
                                 std::size_t header_bytes, std::uint16_t version, const char* what) {
  const std::string name(magic);
  if (bytes.data() == nullptr && !bytes.empty()) throw Error(name + ": null pointer with non-zero length");
  if (bytes.size() < header_bytes + 8) {
    throw Error(name + ": truncated: " + std::to_string(bytes.size()) + " bytes is shorter than the " +
                std::to_string(header_bytes + 8) + "-byte header and checksum");
  }
  check_magic_and_version(bytes.data(), magic, version, what);
}

// XXH64 of bytes given in pieces: digest() is layout::xxh64 of their
// concatenation, for blobs written or read piecewise (a filter's bitset is
// not stored next to its header).
class Xxh64Stream {
 public:
  explicit Xxh64Stream(std::uint64_t seed = 0)
      : seed_(seed),
        v_{seed + layout::kXxhPrime1 + layout::kXxhPrime2, seed + layout::kXxhPrime2, seed, seed - layout::kXxhPrime1} {
  }
  void update(std::span<const std::uint8_t> bytes) {
    const std::uint8_t* p = bytes.data();
    std::size_t n = bytes.size();
    total_ += n;
    if (buffered_ + n < kStripe) {
      if (n != 0) std::memcpy(buf_ + buffered_, p, n);
      buffered_ += n;
      return;
    }
    if (buffered_ != 0) {
      const std::size_t fill = kStripe - buffered_;
      std::memcpy(buf_ + buffered_, p, fill);
      stripe(buf_);
      p += fill;
      n -= fill;
      buffered_ = 0;
    }
    for (; n >= kStripe; p += kStripe, n -= kStripe) stripe(p);
    if (n != 0) std::memcpy(buf_, p, n);
    buffered_ = n;
  }
  std::uint64_t digest() const {
    const std::uint64_t h =
        total_ >= kStripe ? layout::xxh64_merge_lanes(v_[0], v_[1], v_[2], v_[3]) : seed_ + layout::kXxhPrime5;
    return layout::xxh64_finish(h, total_, buf_, buffered_);
  }

 private:
  static constexpr std::size_t kStripe = 32;
  void stripe(const std::uint8_t* p) {
    for (int i = 0; i < 4; ++i) v_[i] = layout::xxh64_round(v_[i], layout::load_le64(p + 8 * i));
  }
  std::uint64_t seed_;
  std::uint64_t v_[4];
  std::uint64_t total_ = 0;
  std::uint8_t buf_[kStripe] = {};
  std::size_t buffered_ = 0;
};

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
