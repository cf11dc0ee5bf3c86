// cacheline512 probe positions as whole blocks: line a of the table is a
// 64-byte block with only bit a set (word a / 32, bit a % 32, DESIGN.md §3's
// numbering). The AVX-512 add on Intel cores ORs a key's k lines into one
// register and writes its block once (cpu/bloom_add-inl.h says when and why).
// 32 KiB, one copy for every target.
#pragma once
#include <cstdint>

#include "probkit/layout/bloom.hpp"

namespace probkit::cpu {

inline constexpr std::uint32_t kCachelinePositions = 32 * layout::kCachelineWords;  // 512

// One flat array, so that a kernel indexes any line by its byte offset, 64 x
// the position.
struct alignas(64) CachelineBitTable {
  std::uint32_t word[kCachelinePositions * layout::kCachelineWords];
};

inline constexpr CachelineBitTable kCachelineBit = [] {
  CachelineBitTable t{};
  for (std::uint32_t a = 0; a < kCachelinePositions; ++a) {
    t.word[a * layout::kCachelineWords + a / 32] = 1u << (a % 32);
  }
  return t;
}();

}  // namespace probkit::cpu
