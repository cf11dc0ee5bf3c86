// Finding line ends with SIMD: every '\n' of a block at once (Highway,
// dispatched to the best target the CPU has), instead of one memchr per line.
#pragma once
#include <cstddef>
#include <cstdint>

namespace probkit::cli {

// Writes the offset of every '\n' in [p, p + n) to out (room for n entries)
// in increasing order; returns how many. n must be below 2^32.
std::size_t find_newlines(const std::uint8_t* p, std::size_t n, std::uint32_t* out);

}  // namespace probkit::cli
