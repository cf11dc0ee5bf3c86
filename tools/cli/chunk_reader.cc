#include "cli/chunk_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "cli/errors.hpp"

namespace probkit::cli {

struct ChunkReader::Input {
  std::string name;
  int fd = -1;
  bool owns_fd = false;
  // Mapped input: [map + offset, map + size) is still to be handed out.
  const std::uint8_t* map = nullptr;
  std::size_t size = 0;
  std::size_t offset = 0;
  // Streamed input: the partial line left over from the last read.
  std::vector<std::uint8_t> carry;
  bool eof = false;

  ~Input() {
    if (map != nullptr) munmap(const_cast<std::uint8_t*>(map), size);
    if (owns_fd && fd >= 0) close(fd);
  }
};

namespace {

std::size_t chunk_bytes_from_environment() {
  const char* env = std::getenv("PROBKIT_READ_BUFFER");
  if (env == nullptr || *env == '\0') return ChunkReader::kChunkBytes;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (end == env || *end != '\0' || v == 0 || v > (std::size_t{1} << 32)) {
    throw UsageError(std::string("PROBKIT_READ_BUFFER='") + env + "' is not a byte count in [1, 2^32]");
  }
  return static_cast<std::size_t>(v);
}

}  // namespace

ChunkReader::ChunkReader(std::vector<std::string> paths, std::size_t chunk_bytes)
    : chunk_bytes_(chunk_bytes != 0 ? chunk_bytes : chunk_bytes_from_environment()) {
  if (paths.empty()) paths.emplace_back("-");
  bool size_known = true;
  for (const std::string& path : paths) {
    auto in = std::make_unique<Input>();
    if (path == "-") {
      in->name = "standard input";
      in->fd = STDIN_FILENO;
    } else {
      in->name = "'" + path + "'";
      in->fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (in->fd < 0) throw InputError("cannot open " + in->name + ": " + std::strerror(errno));
      in->owns_fd = true;
    }
    struct stat st {};
    if (fstat(in->fd, &st) != 0) throw InputError("cannot read " + in->name + ": " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw InputError("cannot read " + in->name + ": it is a folder");
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      const off_t pos = lseek(in->fd, 0, SEEK_CUR);  // standard input may be partly read
      void* m = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, in->fd, 0);
      if (m != MAP_FAILED) {
        madvise(m, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
        in->map = static_cast<const std::uint8_t*>(m);
        in->size = static_cast<std::size_t>(st.st_size);
        in->offset = pos > 0 ? std::min(static_cast<std::size_t>(pos), in->size) : 0;
        total_bytes_ += in->size - in->offset;
      } else {
        size_known = false;
      }
    } else if (!S_ISREG(st.st_mode)) {
      size_known = false;
    }
    inputs_.push_back(std::move(in));
  }
  if (!size_known) total_bytes_ = 0;
  progress_ = std::make_unique<Progress>(total_bytes_);
}

ChunkReader::~ChunkReader() = default;

bool ChunkReader::all_mapped() const {
  return std::all_of(inputs_.begin(), inputs_.end(), [](const auto& in) { return in->map != nullptr; });
}

bool ChunkReader::next(std::vector<std::uint8_t>& buffer, std::span<const std::uint8_t>& chunk) {
  std::lock_guard lock(mutex_);
  if (cancelled_.load()) return false;
  const bool got = next_locked(buffer, chunk);
  if (got) progress_->advance(chunk.size());
  return got;
}

bool ChunkReader::next_locked(std::vector<std::uint8_t>& buffer, std::span<const std::uint8_t>& chunk) {
  while (current_ < inputs_.size()) {
    Input& in = *inputs_[current_];
    if (in.map != nullptr) {
      if (in.offset >= in.size) {
        ++current_;
        continue;
      }
      std::size_t end = std::min(in.size, in.offset + chunk_bytes_);
      if (end < in.size) {
        // Extend to the end of the line that straddles the cut.
        const void* nl = std::memchr(in.map + end - 1, '\n', in.size - (end - 1));
        end = nl != nullptr ? static_cast<std::size_t>(static_cast<const std::uint8_t*>(nl) - in.map) + 1 : in.size;
      }
      chunk = {in.map + in.offset, end - in.offset};
      in.offset = end;
      return true;
    }

    // Streamed: the carried partial line, then reads until the buffer holds
    // chunk_bytes_ bytes (or a whole line, for lines longer than that).
    std::size_t used = in.carry.size();
    std::size_t target = std::max(chunk_bytes_, used + 1);
    if (buffer.size() < target) buffer.resize(target);
    std::copy(in.carry.begin(), in.carry.end(), buffer.begin());
    in.carry.clear();
    std::size_t scanned = 0;  // bytes already known to hold no '\n'
    while (true) {
      while (!in.eof && used < target) {
        const ssize_t r = read(in.fd, buffer.data() + used, target - used);
        if (r < 0) {
          if (errno == EINTR) continue;
          throw InputError("cannot read " + in.name + ": " + std::strerror(errno));
        }
        if (r == 0) in.eof = true;
        used += static_cast<std::size_t>(r);
      }
      if (in.eof) break;
      // Cut after the last '\n'; the rest waits for the next chunk.
      const void* nl = memrchr(buffer.data() + scanned, '\n', used - scanned);
      if (nl != nullptr) {
        const std::size_t cut = static_cast<std::size_t>(static_cast<const std::uint8_t*>(nl) - buffer.data()) + 1;
        in.carry.assign(buffer.begin() + static_cast<std::ptrdiff_t>(cut), buffer.begin() + static_cast<std::ptrdiff_t>(used));
        chunk = {buffer.data(), cut};
        return true;
      }
      scanned = used;  // one line longer than the buffer: grow it
      target = used + chunk_bytes_;
      buffer.resize(target);
    }
    ++current_;  // this input is exhausted
    if (used == 0) continue;
    chunk = {buffer.data(), used};
    return true;
  }
  return false;
}

}  // namespace probkit::cli
