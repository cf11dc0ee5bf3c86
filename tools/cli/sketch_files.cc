#include "cli/sketch_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "cli/atomic_file.hpp"
#include "cli/errors.hpp"
#include "probkit/error.hpp"

namespace probkit::cli {
namespace {

std::string quoted(const std::string& path) { return path == "-" ? "standard input" : "'" + path + "'"; }

bool starts_with(const std::vector<std::uint8_t>& bytes, const char* magic) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), magic, 4) == 0;
}

// What a file is, by its magic bytes, for wrong-kind messages.
const char* kind_of(const std::vector<std::uint8_t>& bytes) {
  if (starts_with(bytes, "PKHL")) return "a probkit HyperLogLog sketch";
  if (starts_with(bytes, "PKBF")) return "a probkit Bloom filter";
  if (starts_with(bytes, "HYLL")) return "a Redis HyperLogLog string";
  return nullptr;
}

}  // namespace

std::vector<std::uint8_t> read_file_until(const std::string& path, const ByteLimit& limit, bool& cut) {
  // Whether to close is the path's to say, not the descriptor's: with standard
  // input closed, open() returns 0 for a named file.
  const bool from_stdin = path == "-";
  const int fd = from_stdin ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError("cannot open " + quoted(path) + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    close(fd);
    throw InputError("cannot read " + quoted(path) + ": it is a folder");
  }
  const std::uint64_t file_size = S_ISREG(st.st_mode) ? static_cast<std::uint64_t>(st.st_size) : 0;
  std::vector<std::uint8_t> out;
  cut = false;
  std::uint8_t buf[1 << 16];
  while (true) {
    const std::uint64_t max = std::min(limit(out), UINT64_MAX - 1);  // max + 1 must not wrap
    if (out.size() > max) {
      out.resize(static_cast<std::size_t>(max) + 1);
      cut = true;
      break;
    }
    // Room for the rest of a regular file, never more than the limit allows.
    const std::uint64_t want = std::min(file_size, max + 1);
    if (out.capacity() < want) out.reserve(static_cast<std::size_t>(want));
    const ssize_t r =
        read(fd, buf, static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, max + 1 - out.size())));
    if (r < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      if (!from_stdin) close(fd);
      throw InputError("cannot read " + quoted(path) + ": " + std::strerror(e));
    }
    if (r == 0) break;
    out.insert(out.end(), buf, buf + r);
  }
  if (!from_stdin) close(fd);
  return out;
}

std::vector<std::uint8_t> read_whole_file(const std::string& path, std::uint64_t max_bytes, const char* what) {
  bool cut = false;
  std::vector<std::uint8_t> out = read_file_until(
      path, [max_bytes](std::span<const std::uint8_t>) { return max_bytes; }, cut);
  if (cut) {
    throw InputError(quoted(path) + " is not a " + what + ": it holds more than " + std::to_string(max_bytes) +
                     " bytes");
  }
  return out;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  throw InputError("cannot check " + quoted(path) + ": " + std::strerror(errno));
}

HyperLogLog load_hll(const std::string& path) {
  const std::vector<std::uint8_t> bytes = read_whole_file(path, kMaxSketchFileBytes, "sketch");
  const char* kind = kind_of(bytes);
  if (kind != nullptr && !starts_with(bytes, "PKHL")) {
    std::string hint = starts_with(bytes, "HYLL") ? "; convert it with 'probkit hll import --redis'" : "";
    throw InputError(quoted(path) + " is " + kind + ", not a probkit HyperLogLog sketch" + hint);
  }
  try {
    return HyperLogLog::deserialize(bytes);
  } catch (const probkit::Error& e) {
    throw InputError(quoted(path) + " is not a valid sketch: " + e.what());
  }
}

BloomFilter load_bloom(const std::string& path) {
  // A PKBF file says its length in its header: reading stops one byte past
  // it, so that `bloom query /dev/zero` or a mistaken 100 GB file ends at
  // once. A header that is not a filter's stops reading at 64 bytes, which
  // are enough for the message saying what is wrong with it.
  bool header_valid = false;
  const auto limit = [&header_valid](std::span<const std::uint8_t> head) -> std::uint64_t {
    constexpr std::uint64_t kHeader = 32, kChecksum = 8;
    if (head.size() < kHeader) return kHeader;
    std::uint64_t num_blocks = 0;
    for (int i = 7; i >= 0; --i) num_blocks = num_blocks << 8 | head[24 + i];
    // Every field docs/FORMAT.md checks before the length: a header wrong
    // in any of them is not trusted for its length, and its first 64 bytes
    // get deserialize's message.
    const std::uint8_t layout = head[6], k = head[7];
    const bool reserved_zero = std::all_of(head.begin() + 9, head.begin() + 16, [](std::uint8_t b) { return b == 0; });
    header_valid = std::memcmp(head.data(), "PKBF", 4) == 0 && head[4] == 1 && head[5] == 0 &&
                   (layout == 1 ? k >= 1 && k <= 16 : layout == 2 && k == 8) && (head[8] == 1 || head[8] == 2) &&
                   reserved_zero && num_blocks >= 1 && num_blocks <= 0xFFFFFFFFu;
    if (!header_valid) return 64;
    return kHeader + num_blocks * (layout == 2 ? 32 : 64) + kChecksum;
  };
  bool cut = false;
  std::vector<std::uint8_t> bytes = read_file_until(path, limit, cut);
  if (cut && header_valid) {
    throw InputError(quoted(path) + " is not a valid Bloom filter: it holds more than the " +
                     std::to_string(bytes.size() - 1) + " bytes its header gives");
  }
  const char* kind = kind_of(bytes);
  if (kind != nullptr && !starts_with(bytes, "PKBF")) {
    throw InputError(quoted(path) + " is " + kind + ", not a probkit Bloom filter");
  }
  try {
    return BloomFilter::deserialize(bytes);
  } catch (const probkit::Error& e) {
    throw InputError(quoted(path) + " is not a valid Bloom filter: " + e.what());
  }
}

void save(AtomicFile& out, const HyperLogLog& sketch) {
  out.write(sketch.serialize());
  out.commit();
}

void save(AtomicFile& out, const BloomFilter& filter) {
  out.write(filter.serialize());
  out.commit();
}

}  // namespace probkit::cli
