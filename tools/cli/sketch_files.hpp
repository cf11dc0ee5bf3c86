// Reading and writing sketch and filter files, with messages that say which
// file is wrong and why (missing, corrupt, or a different kind of file).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "cli/atomic_file.hpp"
#include "probkit/bloom_filter.hpp"
#include "probkit/hyperloglog.hpp"

namespace probkit::cli {

// The whole file ("-" = standard input); InputError when it cannot be read,
// or when it holds more than max_bytes (then `what` names what it should be).
std::vector<std::uint8_t> read_whole_file(const std::string& path, std::uint64_t max_bytes, const char* what);
// More bytes than any sketch file holds (PKHL at p = 18: 262,168; a Redis
// string: under 17,000): reading stops there, so `hll count /dev/zero` ends.
inline constexpr std::uint64_t kMaxSketchFileBytes = std::uint64_t{1} << 20;
bool file_exists(const std::string& path);

// A probkit HyperLogLog file (PKHL); InputError naming the file otherwise.
HyperLogLog load_hll(const std::string& path);
// A probkit Bloom filter file (PKBF); InputError naming the file otherwise.
BloomFilter load_bloom(const std::string& path);

// Writes the native bytes to `out` and renames it into place.
void save(AtomicFile& out, const HyperLogLog& sketch);
void save(AtomicFile& out, const BloomFilter& filter);

}  // namespace probkit::cli
