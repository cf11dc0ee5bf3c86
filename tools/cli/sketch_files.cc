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

// A file opened for reading ("-" = standard input, left open), not a folder.
// Whether to close is the path's to say, not the descriptor's: with standard
// input closed, open() returns 0 for a named file.
struct InputFile {
  explicit InputFile(const std::string& path) : owns(path != "-") {
    fd = owns ? open(path.c_str(), O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    if (fd < 0) throw InputError("cannot open " + quoted(path) + ": " + std::strerror(errno));
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      if (owns) close(fd);
      throw InputError("cannot read " + quoted(path) + ": it is a folder");
    }
  }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  ~InputFile() {
    if (owns) close(fd);
  }
  // The bytes left to read of a regular file (standard input may be one
  // already partly read); 0 for anything else.
  std::uint64_t regular_bytes_left() const {
    if (!S_ISREG(st.st_mode)) return 0;
    const off_t at = lseek(fd, 0, SEEK_CUR);
    return static_cast<std::uint64_t>(st.st_size - std::clamp<off_t>(at, 0, st.st_size));
  }
  bool owns;
  int fd = -1;
  struct stat st {};
};

constexpr std::size_t kPkbfHeader = 32;

}  // namespace

std::vector<std::uint8_t> read_whole_file(const std::string& path, std::uint64_t max_bytes, const char* what) {
  const InputFile in(path);
  max_bytes = std::min(max_bytes, std::uint64_t{UINT64_MAX - 1});  // max_bytes + 1 must not wrap
  std::vector<std::uint8_t> out;
  out.reserve(static_cast<std::size_t>(std::min(in.regular_bytes_left(), max_bytes + 1)));
  std::uint8_t buf[1 << 16];
  while (out.size() <= max_bytes) {
    const std::size_t n =
        read_up_to(in.fd, std::span(buf, std::min<std::uint64_t>(sizeof buf, max_bytes + 1 - out.size())), path);
    if (n == 0) break;
    out.insert(out.end(), buf, buf + n);
  }
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

BloomFilter load_bloom(const std::string& path) {
  // The bytes go straight into the filter's memory (deserialize_from), so a
  // filter is never held twice, and reading stops where its header says it
  // ends: `bloom query /dev/zero`, or a pipe that goes on, end at once.
  const InputFile in(path);
  const int fd = in.fd;
  const std::uint64_t held = in.regular_bytes_left();
  std::vector<std::uint8_t> head(kPkbfHeader);
  head.resize(read_up_to(fd, head, path));
  const char* kind = kind_of(head);
  if (kind != nullptr && !starts_with(head, "PKBF")) {
    throw InputError(quoted(path) + " is " + kind + ", not a probkit Bloom filter");
  }
  std::uint64_t length = 0;
  try {
    // Shorter than a header: deserialize's message (truncated, or bad magic).
    if (head.size() < kPkbfHeader) (void)BloomFilter::deserialize(head);
    length = BloomFilter::serialized_size(head);
  } catch (const probkit::Error& e) {
    throw InputError(quoted(path) + " is not a valid Bloom filter: " + e.what());
  }
  // A file of another length fails before memory for the filter is taken.
  if (S_ISREG(in.st.st_mode) && held != length) {
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
  } catch (const probkit::AllocationError& e) {
    // Its header may be honest: too large for this machine is not corrupt.
    throw InputError("cannot load the Bloom filter in " + quoted(path) + ": " + e.what());
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
