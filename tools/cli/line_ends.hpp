// Finding line ends with SIMD: every '\n' of a block at once (Highway,
// dispatched to the best target the CPU has), instead of one memchr per line.
#pragma once
#include <cstddef>
#include <cstdint>

namespace probkit::cli {

// Writes the offset of every '\n' in [p, p + n) to out in increasing order;
// returns how many. out needs room for n + kNewlineSlack entries (entries
// past the returned count are scratch). n must be below 2^32.
inline constexpr std::size_t kNewlineSlack = 8;
std::size_t find_newlines(const std::uint8_t* p, std::size_t n, std::uint32_t* out);

}  // namespace probkit::cli
