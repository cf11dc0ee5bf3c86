// Owning, zero-initialised, 64-byte aligned byte buffer for filter bitsets and
// sketch registers. Large buffers ask for transparent huge pages. A buffer may
// instead live in the memory of a CUDA device (plain cudaMalloc, never managed
// memory); then data() is a device pointer that host code must not touch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>

#include "probkit/export.hpp"

namespace probkit::detail {

class PROBKIT_API Storage {
 public:
  Storage() = default;
  // `bytes` zeroed bytes; throws probkit::AllocationError if the allocation
  // fails. A 64-bit count, so that a size past what this platform's size_t
  // holds (a filter's num_blocks * block bytes on a 32-bit target) is refused
  // here rather than cut short on the way in.
  explicit Storage(std::uint64_t bytes);
  // `bytes` bytes left as they come, for a caller that overwrites them all
  // before any is read: a large allocation then takes memory only as it is
  // written (a stream that ends early never costs the whole size).
  struct Uninitialized {};
  Storage(std::uint64_t bytes, Uninitialized);
  Storage(const Storage& other);
  Storage& operator=(const Storage& other);
  Storage(Storage&& other) noexcept
      : ptr_(std::move(other.ptr_)), size_(std::exchange(other.size_, 0)),
        device_(std::exchange(other.device_, -1)) {}
  Storage& operator=(Storage&& other) noexcept {
    ptr_ = std::move(other.ptr_);
    size_ = std::exchange(other.size_, 0);
    device_ = std::exchange(other.device_, -1);
    return *this;
  }

  std::uint8_t* data() { return ptr_.get(); }
  const std::uint8_t* data() const { return ptr_.get(); }
  std::size_t size() const { return size_; }
  std::span<std::uint8_t> bytes() { return {ptr_.get(), size_}; }
  std::span<const std::uint8_t> bytes() const { return {ptr_.get(), size_}; }
  template <class T>
  T* as() { return reinterpret_cast<T*>(ptr_.get()); }
  template <class T>
  const T* as() const { return reinterpret_cast<const T*>(ptr_.get()); }

  // Residence: -1 for host memory, else the CUDA device holding the bytes.
  int device() const { return device_; }
  bool on_device() const { return device_ >= 0; }
  // Copies of the bytes in host memory / in the memory of `device` (from
  // either side). Throw probkit::Error with CUDA's error text on failure.
  Storage to_host() const;
  Storage to_device(int device) const;
  // *this if it is in host memory, else a host copy placed in `scratch`.
  const Storage& host_view(Storage& scratch) const;
  // Sets every byte to zero, on whichever side the bytes live.
  void zero();

 private:
  struct Free {
    std::size_t bytes;
    int device = -1;
    void operator()(std::uint8_t* p) const;
  };
  std::unique_ptr<std::uint8_t, Free> ptr_{nullptr, Free{0}};
  std::size_t size_ = 0;
  int device_ = -1;
};

// Throws probkit::Error "<op>: the <object> was moved from ..." where `s`
// holds no bytes: a filter's bitset or a sketch's registers are never empty
// but after a move took them, and a moved-from object may only be assigned
// to or destroyed.
PROBKIT_API void require_not_moved_from(const Storage& s, const char* op, const char* object);

}  // namespace probkit::detail
