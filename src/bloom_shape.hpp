// The shapes a Bloom filter may have (DESIGN.md §3), checked in one place for
// the constructors, the PKBF reader and the false-positive model.
#pragma once
#include <cstdint>

#include "probkit/layout/bloom.hpp"

namespace probkit::detail {

inline constexpr std::uint64_t kMaxBloomBlocks = 0xFFFFFFFFULL;

// Throws probkit::Error, naming `where`, unless the layout is known,
// 1 <= num_blocks <= 2^32-1, and k is valid for the layout (cacheline512:
// 1..16; parquet_sbbf: 8).
void validate_bloom_shape(std::uint64_t num_blocks, std::uint32_t k, BloomLayout layout, const char* where);

// The factor for_capacity aims below the requested rate: what the model
// reads below the true rate, with room (src/bloom_model.cc says how much).
double bloom_sizing_margin(BloomLayout layout, std::uint32_t k);

}  // namespace probkit::detail
