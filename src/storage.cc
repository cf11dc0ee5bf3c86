#include "probkit/detail/storage.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <string>

#include "cuda_backend.hpp"
#include "probkit/error.hpp"

namespace probkit::detail {
namespace {
constexpr std::size_t kAlign = 64;
// From this size on, ask for transparent huge pages so that random probes do
// not pay a TLB miss each (THP runs in madvise mode on the target machines).
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}  // namespace

void Storage::Free::operator()(std::uint8_t* p) const {
  if (device >= 0) {
    cuda::free(p, device);
  } else {
    std::free(p);
  }
}

Storage::Storage(std::uint64_t bytes) : Storage(bytes, Uninitialized{}) {
  if (size_ != 0) std::memset(ptr_.get(), 0, size_);
}

Storage::Storage(std::uint64_t requested, Uninitialized) {
  if (requested == 0) return;
  // Rounded up to the alignment below, a size this close to the top of size_t
  // would wrap to a small allocation that still claimed `requested` bytes.
  if (requested > std::numeric_limits<std::size_t>::max() - (kHugePage - 1)) {
    throw AllocationError("cannot allocate " + std::to_string(requested) +
                          " bytes: more than this platform can address");
  }
  const auto bytes = static_cast<std::size_t>(requested);
  const std::size_t align = bytes >= kHugePage ? kHugePage : kAlign;
  const std::size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw AllocationError("cannot allocate " + std::to_string(bytes) + " bytes");
  if (bytes >= kHugePage) (void)madvise(p, rounded, MADV_HUGEPAGE);
  ptr_ = std::unique_ptr<std::uint8_t, Free>(static_cast<std::uint8_t*>(p), Free{rounded});
  size_ = bytes;
}

Storage::Storage(const Storage& other) {
  if (other.on_device()) {
    *this = other.to_device(other.device_);
    return;
  }
  *this = Storage(other.size_);
  if (size_ != 0) std::memcpy(ptr_.get(), other.ptr_.get(), size_);
}

Storage& Storage::operator=(const Storage& other) {
  if (this != &other) {
    Storage copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Storage Storage::to_host() const {
  Storage out(size_);
  if (size_ != 0) {
    if (on_device()) {
      cuda::copy(out.data(), data(), size_);
    } else {
      std::memcpy(out.data(), data(), size_);
    }
  }
  return out;
}

Storage Storage::to_device(int device) const {
  Storage out;
  if (size_ != 0) {
    auto* p = static_cast<std::uint8_t*>(cuda::alloc(size_, device));
    out.ptr_ = std::unique_ptr<std::uint8_t, Free>(p, Free{size_, device});
    cuda::copy(p, data(), size_);  // the new buffer frees itself if this throws
  }
  out.size_ = size_;
  out.device_ = device;
  return out;
}

const Storage& Storage::host_view(Storage& scratch) const {
  if (!on_device()) return *this;
  scratch = to_host();
  return scratch;
}

void Storage::zero() {
  if (size_ == 0) return;
  if (on_device()) {
    cuda::zero(data(), size_, device_);
  } else {
    std::memset(data(), 0, size_);
  }
}

void require_not_moved_from(const Storage& s, const char* op, const char* object) {
  if (s.size() != 0) return;
  throw Error(std::string(op) + ": the " + object + " was moved from, and may only be assigned to or destroyed");
}

}  // namespace probkit::detail
