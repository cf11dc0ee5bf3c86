#include "cli/chunk_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "cli/errors.hpp"

namespace probkit::cli {
namespace {

// Regular files are read through memory mappings. A file that shrinks while
// it is read (log rotation's copytruncate does that) raises SIGBUS on the
// pages past its new end: the handler below maps a page of zeros there and
// notes which mapping it was, so the reader runs on, and next() then fails the
// command. No output is committed from bytes the file no longer holds.
constexpr int kGuardSlots = 64;  // inputs mapped at once; more are streamed
struct GuardSlot {
  std::atomic<bool> taken{false};
  std::atomic<std::uintptr_t> begin{0};  // 0: no mapping here
  std::atomic<std::uintptr_t> end{0};
};
GuardSlot g_guard[kGuardSlots];
std::atomic<int> g_shrunk{-1};  // the slot of the first mapping that lost pages
std::uintptr_t g_page_size = 4096;
struct sigaction g_previous_sigbus {};

extern "C" void on_sigbus(int, siginfo_t* info, void*) {
  const auto at = reinterpret_cast<std::uintptr_t>(info->si_addr);
  for (int slot = 0; slot < kGuardSlots; ++slot) {
    const std::uintptr_t begin = g_guard[slot].begin.load(std::memory_order_acquire);
    if (begin == 0 || at < begin || at >= g_guard[slot].end.load(std::memory_order_acquire)) continue;
    void* page = reinterpret_cast<void*>(at & ~(g_page_size - 1));
    if (mmap(page, g_page_size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) break;
    int none = -1;
    g_shrunk.compare_exchange_strong(none, slot);
    return;  // the faulting read runs again and finds zeros
  }
  // Not a mapped input: a real fault. Under the previous disposition (by
  // default, termination) the read faults again.
  sigaction(SIGBUS, &g_previous_sigbus, nullptr);
}

// Registers [p, p + bytes) with the handler; returns its slot, or -1 when
// every slot is taken.
int guard_mapping(const void* p, std::size_t bytes) {
  static std::once_flag installed;
  std::call_once(installed, [] {
    g_page_size = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, &g_previous_sigbus);
  });
  for (int slot = 0; slot < kGuardSlots; ++slot) {
    bool free = false;
    if (!g_guard[slot].taken.compare_exchange_strong(free, true)) continue;
    const auto begin = reinterpret_cast<std::uintptr_t>(p);
    g_guard[slot].end.store(begin + bytes, std::memory_order_release);
    g_guard[slot].begin.store(begin, std::memory_order_release);
    return slot;
  }
  return -1;
}

void unguard_mapping(int slot) {
  g_guard[slot].begin.store(0, std::memory_order_release);
  g_guard[slot].end.store(0, std::memory_order_release);
  g_guard[slot].taken.store(false, std::memory_order_release);
}

}  // namespace

struct ChunkReader::Input {
  std::string name;
  int fd = -1;
  std::optional<FileId> file;  // none for standard input read again
  bool owns_fd = false;
  // Mapped input: [map + offset, map + size) is still to be handed out.
  const std::uint8_t* map = nullptr;
  std::size_t size = 0;
  std::size_t offset = 0;
  int guard_slot = -1;  // its slot with the SIGBUS handler
  // Streamed input: the partial line left over from the last read.
  std::vector<std::uint8_t> carry;
  bool eof = false;

  ~Input() {
    if (guard_slot >= 0) unguard_mapping(guard_slot);
    if (map != nullptr) munmap(const_cast<std::uint8_t*>(map), size);
    if (owns_fd && fd >= 0) close(fd);
  }
};

std::size_t ChunkReader::chunk_bytes_from_environment() {
  const char* env = std::getenv("PROBKIT_READ_BUFFER");
  if (env == nullptr || *env == '\0') return ChunkReader::kChunkBytes;
  // Digits only: from_chars takes no sign or white space, as strtoull would.
  const char* end = env + std::strlen(env);
  unsigned long long v = 0;
  const auto [stop, ec] = std::from_chars(env, end, v);
  if (ec != std::errc() || stop != end || v == 0 || v > (std::size_t{1} << 32)) {
    throw UsageError(std::string("PROBKIT_READ_BUFFER='") + env + "' is not a byte count in [1, 2^32]");
  }
  return static_cast<std::size_t>(v);
}

ChunkReader::ChunkReader(std::vector<std::string> paths, std::size_t chunk_bytes)
    : chunk_bytes_(chunk_bytes != 0 ? chunk_bytes : chunk_bytes_from_environment()) {
  if (paths.empty()) paths.emplace_back("-");
  bool size_known = true;
  bool stdin_mapped = false;
  for (const std::string& path : paths) {
    auto in = std::make_unique<Input>();
    if (path == "-" && stdin_mapped) {
      // Standard input read again holds nothing more, as a pipe would: the
      // first "-" takes the file to its end.
      in->name = "standard input";
      inputs_.push_back(std::move(in));
      continue;
    }
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
    in->file = file_id(st);
    if (S_ISREG(st.st_mode) && st.st_size > 0) {
      const off_t pos = lseek(in->fd, 0, SEEK_CUR);  // standard input may be partly read
      void* m = mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ, MAP_PRIVATE, in->fd, 0);
      const int slot = m != MAP_FAILED ? guard_mapping(m, static_cast<std::size_t>(st.st_size)) : -1;
      if (m != MAP_FAILED && slot < 0) {  // no slot to guard it: streamed instead
        munmap(m, static_cast<std::size_t>(st.st_size));
        m = MAP_FAILED;
      }
      if (m != MAP_FAILED) {
        in->guard_slot = slot;
        madvise(m, static_cast<std::size_t>(st.st_size), MADV_SEQUENTIAL);
        in->map = static_cast<const std::uint8_t*>(m);
        in->size = static_cast<std::size_t>(st.st_size);
        in->offset = pos > 0 ? std::min(static_cast<std::size_t>(pos), in->size) : 0;
        total_bytes_ += in->size - in->offset;
        stdin_mapped = stdin_mapped || !in->owns_fd;
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

const std::string* ChunkReader::input_that_is(const FileId& file) const {
  for (const auto& in : inputs_) {
    if (in->file == file) return &in->name;
  }
  return nullptr;
}

bool ChunkReader::next(std::vector<std::uint8_t>& buffer, std::span<const std::uint8_t>& chunk) {
  std::lock_guard lock(mutex_);
  throw_if_shrunk();
  if (cancelled_.load()) return false;
  const bool got = next_locked(buffer, chunk);
  // Every worker's last call comes here too, after its last chunk: the last
  // one's check of the sizes follows every read of the mappings.
  throw_if_shrunk(/*check_sizes=*/!got);
  if (got) progress_->advance(chunk.size());
  return got;
}

void ChunkReader::throw_if_shrunk(bool check_sizes) const {
  const int slot = g_shrunk.load();
  if (slot < 0 && !check_sizes) return;
  for (const auto& in : inputs_) {
    struct stat st {};
    const bool shorter = check_sizes && in->map != nullptr && fstat(in->fd, &st) == 0 &&
                         static_cast<std::uint64_t>(st.st_size) < in->size;
    if ((slot >= 0 && in->guard_slot == slot) || shorter) {
      throw InputError("cannot read " + in->name + ": it shrank while it was read (truncated or rotated?)");
    }
  }
}

bool ChunkReader::next_locked(std::vector<std::uint8_t>& buffer, std::span<const std::uint8_t>& chunk) {
  while (current_ < inputs_.size()) {
    Input& in = *inputs_[current_];
    if (in.fd < 0) {  // a repeated "-" after a mapped standard input
      ++current_;
      continue;
    }
    if (in.map != nullptr) {
      if (in.offset >= in.size) {
        // Standard input is left at the end of what was read, as reading it
        // would: a command after this one in a shell group reads on from there.
        if (!in.owns_fd) (void)lseek(in.fd, static_cast<off_t>(in.size), SEEK_SET);
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
