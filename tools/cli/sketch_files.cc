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

std::vector<std::uint8_t> read_whole_file(const std::string& path, std::uint64_t max_bytes, const char* what) {
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
  max_bytes = std::min(max_bytes, std::uint64_t{UINT64_MAX - 1});  // max_bytes + 1 must not wrap
  std::vector<std::uint8_t> out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(st.st_size, max_bytes + 1)));
  std::uint8_t buf[1 << 16];
  while (out.size() <= max_bytes) {
    const ssize_t r =
        read(fd, buf, static_cast<std::size_t>(std::min<std::uint64_t>(sizeof buf, max_bytes + 1 - out.size())));
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
  if (out.size() > max_bytes) {
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

namespace {

constexpr std::size_t kPkbfHeader = 32;

// The length of the PKBF bytes a 32-byte header gives, or 0 when a field that
// docs/FORMAT.md checks before the length is wrong (then deserialize's
// message says which).
std::uint64_t pkbf_length(std::span<const std::uint8_t> head) {
  std::uint64_t num_blocks = 0;
  for (int i = 7; i >= 0; --i) num_blocks = num_blocks << 8 | head[24 + i];
  const std::uint8_t layout = head[6], k = head[7];
  const bool reserved_zero = std::all_of(head.begin() + 9, head.begin() + 16, [](std::uint8_t b) { return b == 0; });
  const bool valid = std::memcmp(head.data(), "PKBF", 4) == 0 && head[4] == 1 && head[5] == 0 &&
                     (layout == 1 ? k >= 1 && k <= 16 : layout == 2 && k == 8) && (head[8] == 1 || head[8] == 2) &&
                     reserved_zero && num_blocks >= 1 && num_blocks <= 0xFFFFFFFFu;
  return valid ? kPkbfHeader + num_blocks * (layout == 2 ? 32 : 64) + 8 : 0;
}

// read(2) until `out` is full or the input ends; InputError on a read error.
std::size_t read_up_to(int fd, std::span<std::uint8_t> out, const std::string& path) {
  std::size_t got = 0;
  while (got < out.size()) {
    const ssize_t r = read(fd, out.data() + got, out.size() - got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw InputError("cannot read " + quoted(path) + ": " + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

}  // namespace

BloomFilter load_bloom(const std::string& path) {
  // The bytes go straight into the filter's memory (deserialize_from), so a
  // filter is never held twice, and reading stops where its header says it
  // ends: `bloom query /dev/zero`, or a pipe that goes on, end at once.
  const bool from_stdin = path == "-";
  const int fd = from_stdin ? STDIN_FILENO : open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError("cannot open " + quoted(path) + ": " + std::strerror(errno));
  struct Closer {
    int fd;
    bool owns;
    ~Closer() {
      if (owns) close(fd);
    }
  } closer{fd, !from_stdin};
  struct stat st {};
  if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) throw InputError("cannot read " + quoted(path) + ": it is a folder");
  // Standard input may be a file already partly read: its bytes are those left.
  const off_t start = S_ISREG(st.st_mode) ? lseek(fd, 0, SEEK_CUR) : 0;
  std::vector<std::uint8_t> head(kPkbfHeader);
  head.resize(read_up_to(fd, head, path));
  const std::uint64_t length = head.size() == kPkbfHeader ? pkbf_length(head) : 0;
  if (length == 0) {
    // Not a filter's header: 64 bytes are enough to say what is wrong.
    const std::size_t got = head.size();
    head.resize(64);
    head.resize(got + read_up_to(fd, std::span(head).subspan(got), path));
    const char* kind = kind_of(head);
    if (kind != nullptr && !starts_with(head, "PKBF")) {
      throw InputError(quoted(path) + " is " + kind + ", not a probkit Bloom filter");
    }
    try {
      (void)BloomFilter::deserialize(head);  // throws: no filter is this short or has this header
    } catch (const probkit::Error& e) {
      throw InputError(quoted(path) + " is not a valid Bloom filter: " + e.what());
    }
    throw InputError(quoted(path) + " is not a valid Bloom filter");
  }
  // A file of another length fails before memory for the filter is taken.
  const std::uint64_t held = static_cast<std::uint64_t>(st.st_size - std::max<off_t>(start, 0));
  if (S_ISREG(st.st_mode) && held != length) {
    throw InputError(quoted(path) + " is not a valid Bloom filter: it holds " + std::to_string(held) +
                     " bytes, not the " + std::to_string(length) + " its header gives");
  }
  std::size_t served = 0;  // of the header, already read
  const auto source = [&](std::span<std::uint8_t> out) -> std::size_t {
    if (served < head.size()) {
      const std::size_t n = std::min(out.size(), head.size() - served);
      std::memcpy(out.data(), head.data() + served, n);
      served += n;
      return n;
    }
    return read_up_to(fd, out.first(std::min<std::size_t>(out.size(), std::size_t{1} << 24)), path);
  };
  try {
    return BloomFilter::deserialize_from(source);
  } catch (const probkit::Error& e) {
    throw InputError(quoted(path) + " is not a valid Bloom filter: " + e.what());
  }
}

void save(AtomicFile& out, const HyperLogLog& sketch) {
  out.write(sketch.serialize());
  out.commit();
}

void save(AtomicFile& out, const BloomFilter& filter) {
  // In pieces, the bitset straight from the filter's memory: never held twice.
  filter.serialize_to([&out](std::span<const std::uint8_t> piece) { out.write(piece); });
  out.commit();
}

}  // namespace probkit::cli
