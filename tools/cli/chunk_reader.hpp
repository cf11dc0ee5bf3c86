// Input: a list of files (or standard input) cut into chunks of whole lines.
// Regular files are memory-mapped and chunks are slices of the mapping (a
// file that shrinks meanwhile reads as zeros past its new end, and next()
// then throws InputError); pipes and terminals are read in large blocks into
// the caller's buffer.
// Several worker threads may pull chunks at once.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "cli/atomic_file.hpp"
#include "cli/progress.hpp"

namespace probkit::cli {

class ChunkReader {
 public:
  // Opens every input now, so that a missing file fails before any work
  // (InputError). No paths = standard input; "-" is standard input too.
  // `chunk_bytes` defaults to kChunkBytes, or the environment variable
  // PROBKIT_READ_BUFFER (tests use it to put chunk ends everywhere).
  explicit ChunkReader(std::vector<std::string> paths, std::size_t chunk_bytes = 0);
  ~ChunkReader();
  ChunkReader(const ChunkReader&) = delete;
  ChunkReader& operator=(const ChunkReader&) = delete;

  // Sets `chunk` to the next run of whole lines (the last line of an input
  // may lack its '\n'), using `buffer` as this caller's storage when the
  // input is streamed. The chunk stays valid until the next call with the
  // same buffer. Returns false when all input is consumed. Thread-safe.
  bool next(std::vector<std::uint8_t>& buffer, std::span<const std::uint8_t>& chunk);

  // Makes every later next() return false (a worker failed; stop the others).
  void cancel() { cancelled_.store(true); }

  // Sum of the input sizes, 0 if any is unknown (a pipe).
  std::uint64_t total_bytes() const { return total_bytes_; }
  std::size_t chunk_bytes() const { return chunk_bytes_; }
  // True when every input is mapped, so workers never wait on a read.
  bool all_mapped() const;
  // The name of the input ("'path'" or "standard input") that is `file`,
  // or null if none is.
  const std::string* input_that_is(const FileId& file) const;

  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;
  // PROBKIT_READ_BUFFER's byte count, or kChunkBytes where it is unset or
  // empty; UsageError for anything but digits of a count in [1, 2^32].
  static std::size_t chunk_bytes_from_environment();

 private:
  struct Input;
  bool next_locked(std::vector<std::uint8_t>& buffer, std::span<const std::uint8_t>& chunk);
  // InputError if one of this reader's mapped files lost pages while read
  // (the SIGBUS handler saw it), or, with `check_sizes`, is now shorter than
  // when it was mapped: the bytes between a new end and the end of its page
  // read as zeros, with no SIGBUS.
  void throw_if_shrunk(bool check_sizes = false) const;

  std::mutex mutex_;
  std::vector<std::unique_ptr<Input>> inputs_;
  std::size_t current_ = 0;
  std::atomic<bool> cancelled_{false};
  std::size_t chunk_bytes_;
  std::uint64_t total_bytes_ = 0;
  std::unique_ptr<Progress> progress_;
};

}  // namespace probkit::cli
