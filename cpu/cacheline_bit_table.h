// cacheline512 probe positions as whole blocks: line p is a 64-byte block
// with only bit p set (word p / 32, bit p % 32, layout::cacheline_mask_or's
// numbering). An AVX-512 add ORs k lines of it into one register and writes
// the key's block once (cpu/bloom_add-inl.h says why). 32 KiB, one copy for all
// targets.
#pragma once
#include <cstdint>

#include "probkit/layout/bloom.hpp"

namespace probkit::cpu {

inline constexpr std::uint32_t kCachelinePositions = 32 * layout::kCachelineWords;  // 512

// One flat array, so that a kernel may index any line from its start.
struct alignas(64) CachelineBitTable {
  std::uint32_t word[kCachelinePositions * layout::kCachelineWords];
};

inline constexpr CachelineBitTable kCachelineBit = [] {
  CachelineBitTable t{};
  for (std::uint32_t p = 0; p < kCachelinePositions; ++p) {
    t.word[p * layout::kCachelineWords + p / 32] = 1u << (p % 32);
  }
  return t;
}();

}  // namespace probkit::cpu
