// One writer at a time for a file that is read again, changed and written
// back (the end of `hll add`): without it two runs that read the same sketch
// each write it back with their own keys, and one run's keys are lost.
//
// The lock is flock(2) on the file the path names (symbolic links followed)
// or, where there is no file yet, on its folder, so that two runs creating
// the same sketch take turns too. It is held until destruction: construct it
// after the AtomicFile that replaces the file, so that it outlives the
// rename. A run that waited on a file that another run then replaced locks
// the replacement, whose contents are the ones to read. Hold it only for
// work that waits on nothing else (never while reading a pipe): two runs
// fed by one `tee` would otherwise wait for each other for ever. The kernel
// drops the lock when the process ends, however it ends.
//
// Advisory: only other UpdateLocks wait for it. A device, pipe or socket is
// not locked, nor is a file where the file system refuses flock(2) (some
// network file systems).
#pragma once
#include <string>

namespace probkit::cli {

class UpdateLock {
 public:
  // Waits until no other UpdateLock holds `path`. A path that cannot be
  // opened, for another reason than its absence, is not locked: reading or
  // writing it then fails and says why.
  explicit UpdateLock(const std::string& path);
  UpdateLock(const UpdateLock&) = delete;
  UpdateLock& operator=(const UpdateLock&) = delete;
  ~UpdateLock();

 private:
  int fd_ = -1;  // the file's or its folder's descriptor, locked; -1 if nothing is
};

}  // namespace probkit::cli
