// A non-owning view of a batch of keys of any kind that bulk calls accept
// (docs/FORMAT.md, "Keys and their hashes"). Validated on construction: a bad
// batch never reaches a kernel.
// Being a view, it checks string offsets once, when made: after changing the
// offsets, make a new Keys. And like std::span, it does not keep its keys
// alive: `f.add(make_keys())` is sound (the vector lives to the end of the
// call), `Keys k = make_keys(); f.add(k);` reads freed memory. A bulk call throws Error for keys whose memory
// overlaps what it writes (the filter's bitset, the sketch's registers,
// contains' output); the bytes a string_view points to are not checked.
// Key and offset arrays are aligned to their element width, as any typed
// pointer must be; a device-resident object's call refuses device ones that
// are not (a GPU would fault), before it changes anything.
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <type_traits>
#include <vector>

#include "probkit/detail/key_batch.hpp"
#include "probkit/export.hpp"

namespace probkit {

// Arrow-style variable-length byte strings: key i is data[offsets[i], offsets[i+1]).
template <class Offset>
struct StringBatch {
  static_assert(std::is_same_v<Offset, std::int32_t> || std::is_same_v<Offset, std::int64_t>);
  std::span<const Offset> offsets;  // n + 1 entries, non-decreasing, within data
  std::span<const std::uint8_t> data;
};

// 64-bit hashes computed elsewhere; used as given.
struct Prehashed {
  std::span<const std::uint64_t> hashes;
};

// Says where key memory lives for a device-resident object's bulk call.
// Detect asks CUDA (one pointer query per call, which also finds keys in the
// wrong place: split between host and device, or on another device). Device
// is taken on trust, without the query: the kernels read the keys where they
// are, so memory the GPU cannot read faults there (an error CUDA keeps for
// the rest of the process). Only alignment is checked.
enum class KeyMemory : std::uint8_t { Detect, Host, Device };

class PROBKIT_API Keys {
 public:
  Keys(std::span<const std::uint32_t> keys, KeyMemory where = KeyMemory::Detect);
  Keys(std::span<const std::uint64_t> keys, KeyMemory where = KeyMemory::Detect);
  Keys(Prehashed keys, KeyMemory where = KeyMemory::Detect);
  Keys(StringBatch<std::int32_t> keys, KeyMemory where = KeyMemory::Detect);
  Keys(StringBatch<std::int64_t> keys, KeyMemory where = KeyMemory::Detect);
  Keys(std::span<const std::string_view> keys);

  // Convenience for the common owning containers.
  Keys(std::span<std::uint32_t> keys) : Keys(std::span<const std::uint32_t>(keys)) {}
  Keys(std::span<std::uint64_t> keys) : Keys(std::span<const std::uint64_t>(keys)) {}
  Keys(const std::vector<std::uint32_t>& keys) : Keys(std::span<const std::uint32_t>(keys)) {}
  Keys(const std::vector<std::uint64_t>& keys) : Keys(std::span<const std::uint64_t>(keys)) {}
  Keys(const std::vector<std::string_view>& keys) : Keys(std::span<const std::string_view>(keys)) {}

  std::size_t size() const { return batch_.n; }
  bool empty() const { return batch_.n == 0; }
  const detail::KeyBatch& batch() const { return batch_; }

 private:
  detail::KeyBatch batch_{};
};

}  // namespace probkit
