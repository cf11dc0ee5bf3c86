// Output files that appear whole or not at all: bytes go to a temporary file
// in the destination's folder, which is renamed over the destination only
// after every byte is written. A failure, an exception or a signal
// (SIGINT, SIGTERM, SIGHUP, unless ignored at start) removes the temporary
// file. A destination reached through symbolic links is the file they lead
// to (the links stay); an existing one keeps its permissions, and a
// read-only one is an error. A device or pipe (/dev/stdout) is written in
// place, and so is "-", standard output.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace probkit::cli {

// Which file a name or descriptor reaches: two that share device and inode
// are one file (hard links, symbolic links, /dev/stdin redirected from it).
struct FileId {
  dev_t device;
  ino_t inode;
  friend bool operator==(const FileId&, const FileId&) = default;
};
inline FileId file_id(const struct stat& st) { return {st.st_dev, st.st_ino}; }

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
  // The existing file commit() replaces; nullopt where it creates one, or
  // writes a device, pipe or standard output in place.
  std::optional<FileId> replaced_file() const { return replaced_; }

 private:
  std::string path_;
  std::string name_;    // for messages: 'path', or standard output
  std::string target_;  // path_ with symbolic links followed: what commit() replaces
  std::string temp_path_;
  int fd_ = -1;
  bool in_place_ = false;  // a device or pipe, written directly
  std::optional<FileId> replaced_;
  bool committed_ = false;
};

// The file `path` names once symbolic links are followed (even one not there
// yet): the file an AtomicFile replaces, so that the links stay.
std::string resolve_links(const std::string& path);

// Writes `bytes` to `path` through an AtomicFile.
void write_file_atomically(const std::string& path, std::span<const std::uint8_t> bytes);

}  // namespace probkit::cli
