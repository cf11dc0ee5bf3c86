// Test key batches of every kind bulk calls accept (DESIGN.md §2), built from
// one list of 64-bit values so that duplicates stay duplicates in every kind,
// and placed `offset` elements into a larger buffer so that no span is aligned
// by accident.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "probkit/probkit.hpp"

namespace probkit::test {

enum class KeyKind { U32, U64, Prehashed, Str32, Str64, Views };
inline constexpr KeyKind kAllKeyKinds[] = {KeyKind::U32,   KeyKind::U64,   KeyKind::Prehashed,
                                           KeyKind::Str32, KeyKind::Str64, KeyKind::Views};

inline const char* key_kind_name(KeyKind k) {
  switch (k) {
    case KeyKind::U32: return "u32";
    case KeyKind::U64: return "u64";
    case KeyKind::Prehashed: return "prehashed";
    case KeyKind::Str32: return "strings32";
    case KeyKind::Str64: return "strings64";
    case KeyKind::Views: return "string_views";
  }
  return "?";
}

// SplitMix64 (Steele, Lea, Flood 2014): a fixed-seed generator for test data.
inline std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// One input shape of the identity tests.
struct InputCase {
  const char* label;
  std::size_t n;         // keys
  std::size_t offset;    // elements (and bytes) into the larger buffer
  std::size_t distinct;  // 0: all distinct; else values drawn from this many
  std::size_t max_len;   // strings: lengths 0 .. max_len
  bool sequential_lengths = false;  // string i has length i % (max_len + 1)
};

// n values; with `distinct`, many repeats.
inline std::vector<std::uint64_t> make_values(const InputCase& c, std::uint64_t seed) {
  std::vector<std::uint64_t> v(c.n);
  for (std::size_t i = 0; i < c.n; ++i) {
    const std::uint64_t r = splitmix64(seed * 0x100000001b3ULL + i);
    v[i] = c.distinct == 0 ? r : splitmix64(seed + r % c.distinct);
  }
  return v;
}

// Owns the memory of one key batch of one kind.
class KeyColumn {
 public:
  KeyColumn(KeyKind kind, const std::vector<std::uint64_t>& values, const InputCase& c)
      : kind_(kind), n_(values.size()), offset_(c.offset) {
    const std::size_t n = n_, o = offset_;
    switch (kind) {
      case KeyKind::U32:
        u32_.assign(n + o, 0xdeadbeef);
        for (std::size_t i = 0; i < n; ++i) u32_[o + i] = static_cast<std::uint32_t>(values[i]);
        break;
      case KeyKind::U64:
      case KeyKind::Prehashed:
        u64_.assign(n + o, 0xdeadbeefdeadbeefULL);
        for (std::size_t i = 0; i < n; ++i) u64_[o + i] = values[i];
        break;
      case KeyKind::Str32:
      case KeyKind::Str64:
      case KeyKind::Views: {
        // `o` junk bytes first: the data pointer is unaligned and offsets[0] = o.
        bytes_.assign(o, 0xAB);
        std::vector<std::int64_t> offs{static_cast<std::int64_t>(o)};
        for (std::size_t i = 0; i < n; ++i) {
          const std::uint64_t v = values[i];
          const std::size_t len = c.sequential_lengths ? i % (c.max_len + 1) : splitmix64(v) % (c.max_len + 1);
          std::uint64_t s = v;
          for (std::size_t j = 0; j < len; ++j) {
            if (j % 8 == 0) s = splitmix64(s);
            bytes_.push_back(static_cast<std::uint8_t>(s >> (8 * (j % 8))));
          }
          offs.push_back(static_cast<std::int64_t>(bytes_.size()));
        }
        if (kind == KeyKind::Str32) {
          off32_.assign(o, -1);
          for (auto x : offs) off32_.push_back(static_cast<std::int32_t>(x));
        } else if (kind == KeyKind::Str64) {
          off64_.assign(o, -1);
          off64_.insert(off64_.end(), offs.begin(), offs.end());
        } else {
          views_.assign(o, std::string_view("junk"));
          const char* base = reinterpret_cast<const char*>(bytes_.data());
          for (std::size_t i = 0; i < n; ++i) {
            views_.emplace_back(base + offs[i], static_cast<std::size_t>(offs[i + 1] - offs[i]));
          }
        }
        break;
      }
    }
  }
  KeyColumn(const KeyColumn&) = delete;  // views point into bytes_
  KeyColumn& operator=(const KeyColumn&) = delete;

  Keys keys() const {
    return keys_in([](const auto& v) { return std::span(v); }, KeyMemory::Detect);
  }

  // The same batch over copies of this column's arrays: copy(const
  // std::vector<T>&) returns a std::span<const T> of the copy (device memory,
  // in the CUDA tests), kept alive by the caller. String views have no copy:
  // they stay the host's.
  template <class Copy>
  Keys keys_in(Copy&& copy, KeyMemory where) const {
    const std::size_t n = n_, o = offset_;
    switch (kind_) {
      case KeyKind::U32: return Keys(copy(u32_).subspan(o, n), where);
      case KeyKind::U64: return Keys(copy(u64_).subspan(o, n), where);
      case KeyKind::Prehashed: return Keys(Prehashed{copy(u64_).subspan(o, n)}, where);
      case KeyKind::Str32:
        return Keys(StringBatch<std::int32_t>{copy(off32_).subspan(o), copy(bytes_)}, where);
      case KeyKind::Str64:
        return Keys(StringBatch<std::int64_t>{copy(off64_).subspan(o), copy(bytes_)}, where);
      case KeyKind::Views: return Keys(std::span<const std::string_view>(views_).subspan(o, n));
    }
    return Keys(std::span<const std::uint64_t>());
  }

  // A string column's offsets (from key 0) and bytes, to build bad batches from.
  std::vector<std::int32_t> offsets32() const { return {off32_.begin() + offset_, off32_.end()}; }
  std::vector<std::int64_t> offsets64() const { return {off64_.begin() + offset_, off64_.end()}; }
  const std::vector<std::uint8_t>& bytes() const { return bytes_; }

  // The bytes key i is hashed as (its little-endian bytes or its string).
  std::string_view key_bytes(std::size_t i) const {
    const std::size_t o = offset_;
    switch (kind_) {
      case KeyKind::U32: return {reinterpret_cast<const char*>(&u32_[o + i]), 4};
      case KeyKind::U64:
      case KeyKind::Prehashed: return {reinterpret_cast<const char*>(&u64_[o + i]), 8};
      case KeyKind::Str32:
      case KeyKind::Str64:
      case KeyKind::Views: return views_of(i);
    }
    return {};
  }
  std::uint64_t u64(std::size_t i) const { return u64_[offset_ + i]; }
  std::size_t size() const { return n_; }

 private:
  std::string_view views_of(std::size_t i) const {
    const std::size_t o = offset_;
    std::int64_t lo, hi;
    if (kind_ == KeyKind::Str32) {
      lo = off32_[o + i], hi = off32_[o + i + 1];
    } else if (kind_ == KeyKind::Str64) {
      lo = off64_[o + i], hi = off64_[o + i + 1];
    } else {
      return views_[o + i];
    }
    return {reinterpret_cast<const char*>(bytes_.data()) + lo, static_cast<std::size_t>(hi - lo)};
  }

  KeyKind kind_;
  std::size_t n_, offset_;
  std::vector<std::uint32_t> u32_;
  std::vector<std::uint64_t> u64_;
  std::vector<std::uint8_t> bytes_;
  std::vector<std::int32_t> off32_;
  std::vector<std::int64_t> off64_;
  std::vector<std::string_view> views_;
};

}  // namespace probkit::test
