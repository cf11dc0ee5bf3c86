#include "cli/sketch_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
  std::vector<std::uint8_t> out;
  if (S_ISREG(st.st_mode)) out.reserve(static_cast<std::size_t>(st.st_size));
  std::uint8_t buf[1 << 16];
  while (true) {
    const ssize_t r = read(fd, buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      const int e = errno;
      if (!from_stdin) close(fd);
      throw InputError("cannot read " + quoted(path) + ": " + std::strerror(e));
    }
    if (r == 0) break;
    out.insert(out.end(), buf, buf + r);
    if (out.size() > max_bytes) {
      if (!from_stdin) close(fd);
      throw InputError(quoted(path) + " is not a " + what + ": it holds more than " + std::to_string(max_bytes) +
                       " bytes");
    }
  }
  if (!from_stdin) close(fd);
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
  const std::vector<std::uint8_t> bytes = read_whole_file(path);
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
