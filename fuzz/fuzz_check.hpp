// Shared by the fuzz targets: an invariant check that stops the run with the
// failed condition (libFuzzer saves the input that broke it), the blob
// reading of the native-format targets, and what a sketch's estimate must be.
// A target catches probkit::Error, the expected answer to bad bytes, and
// nothing else: any other exception escapes and is a finding.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "probkit/hyperloglog.hpp"
#include "probkit/layout/xxh64.hpp"

#define FUZZ_CHECK(cond)                                                                     \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

namespace probkit::fuzz {

// The native formats end with XXH64 (seed 0) of everything before it. A
// mutated blob almost never keeps a valid checksum, so a target that only fed
// raw bytes would test little beyond the checksum check: the first input byte
// says whether to recompute it, letting the fuzzer reach every field check
// behind it.
inline std::vector<std::uint8_t> blob_from_input(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return {};
  std::vector<std::uint8_t> blob(data + 1, data + size);
  if ((data[0] & 1) != 0 && blob.size() >= 8) {
    const std::size_t body = blob.size() - 8;
    const std::uint64_t sum = layout::xxh64(blob.data(), body, 0);
    for (int i = 0; i < 8; ++i) blob[body + i] = static_cast<std::uint8_t>(sum >> (8 * i));
  }
  return blob;
}

// A sketch's estimate is finite and non-negative, but for a saturated sketch
// (every register at its maximum rank, 65 - p), whose estimate is +infinity
// (hyperloglog.hpp).
inline bool estimate_is_sound(const HyperLogLog& h) {
  const double estimate = h.estimate();
  const bool saturated = h.histogram().back() == h.num_registers();
  return saturated ? estimate == std::numeric_limits<double>::infinity() : std::isfinite(estimate) && estimate >= 0.0;
}

}  // namespace probkit::fuzz
