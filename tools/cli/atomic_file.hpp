// Output files that appear whole or not at all: bytes go to a temporary file
// in the destination's folder, which is renamed over the destination only
// after every byte is written. A failure, an exception or a signal
// (SIGINT, SIGTERM, SIGHUP) removes the temporary file.
#pragma once
#include <cstdint>
#include <span>
#include <string>

namespace probkit::cli {

class AtomicFile {
 public:
  // Creates the temporary file next to `path`; throws InputError when the
  // folder is not writable.
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();  // removes the temporary file unless commit() succeeded

  void write(std::span<const std::uint8_t> bytes);
  // Flushes, closes and renames over the destination.
  void commit();

 private:
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
};

// Writes `bytes` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::span<const std::uint8_t> bytes);

}  // namespace probkit::cli
