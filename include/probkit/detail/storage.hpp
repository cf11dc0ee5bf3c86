// Owning, zero-initialised, 64-byte aligned byte buffer for filter bitsets and
// sketch registers. Large buffers ask for transparent huge pages.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace probkit::detail {

class Storage {
 public:
  Storage() = default;
  // `bytes` zeroed bytes; throws probkit::Error if the allocation fails.
  explicit Storage(std::size_t bytes);
  Storage(const Storage& other);
  Storage& operator=(const Storage& other);
  Storage(Storage&&) noexcept = default;
  Storage& operator=(Storage&&) noexcept = default;

  std::uint8_t* data() { return ptr_.get(); }
  const std::uint8_t* data() const { return ptr_.get(); }
  std::size_t size() const { return size_; }
  std::span<std::uint8_t> bytes() { return {ptr_.get(), size_}; }
  std::span<const std::uint8_t> bytes() const { return {ptr_.get(), size_}; }
  template <class T>
  T* as() { return reinterpret_cast<T*>(ptr_.get()); }
  template <class T>
  const T* as() const { return reinterpret_cast<const T*>(ptr_.get()); }

 private:
  struct Free {
    std::size_t bytes;
    void operator()(std::uint8_t* p) const;
  };
  std::unique_ptr<std::uint8_t, Free> ptr_{nullptr, Free{0}};
  std::size_t size_ = 0;
};

}  // namespace probkit::detail
