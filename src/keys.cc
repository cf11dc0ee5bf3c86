#include "probkit/keys.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "bulk.hpp"
#include "cuda_backend.hpp"
#include "dispatch.hpp"
#include "key_ranges.hpp"
#include "probkit/error.hpp"

namespace probkit {
namespace {

// The batch's `where`, one of KeyMemory's three: any other value (a cast from
// a bad integer) is refused here, as the other enums' are where they are taken.
KeyMemory checked(KeyMemory where, const char* what) {
  if (where == KeyMemory::Detect || where == KeyMemory::Host || where == KeyMemory::Device) return where;
  throw Error(std::string(what) + " batch: unknown KeyMemory " + std::to_string(static_cast<int>(where)) +
              " (valid: Detect, Host, Device)");
}

template <class T>
detail::KeyBatch fixed_width(std::span<const T> keys, detail::KeyKind kind, KeyMemory where,
                             const char* what) {
  if (keys.data() == nullptr && !keys.empty()) {
    throw Error(std::string(what) + " batch has a null pointer and " + std::to_string(keys.size()) +
                " keys");
  }
  detail::KeyBatch b;
  b.kind = kind;
  b.n = keys.size();
  b.keys = keys.data();
  b.memory = static_cast<std::uint8_t>(checked(where, what));
  return b;
}

// Whether off[0] >= 0 and off[0..m) are non-decreasing and <= limit, and
// whether the strings are all 8 or all 16 bytes long (CpuKernels::
// check_offsets). A batch large enough for several workers is checked by all
// of them, each piece (for_each_worker_share) with the last offset before it,
// so no pair is left out; the strings have a fixed width if every piece's
// have the same.
template <class Offset>
detail::OffsetsCheck check_offsets(const Offset* off, std::size_t m, Offset limit) {
  if (m == 0) return {true, 0};
  if (off[0] < 0) return {false, 0};
  constexpr bool kWide = sizeof(Offset) == 8;
  // Below this a dispatched call costs more than the pass.
  constexpr std::size_t kDispatchFrom = 256;
  const detail::CpuKernels& kernels = m < kDispatchFrom ? detail::scalar_kernels() : detail::batch_check_kernels();
  const unsigned workers = detail::workers_for(m);
  if (workers <= 1) return kernels.check_offsets(off, kWide, m, limit);
  // What the pieces a worker took (several, or none) found.
  struct Found {
    bool took = false;
    detail::OffsetsCheck check{true, 0};
  };
  const auto join = [](Found& into, const detail::OffsetsCheck& piece) {
    into.check.in_order = into.check.in_order && piece.in_order;
    const bool same = !into.took || into.check.fixed_width == piece.fixed_width;
    into.check.fixed_width = same ? piece.fixed_width : 0;
    into.took = true;
  };
  std::vector<Found> found(workers);
  detail::for_each_worker_share(m, workers, [&](unsigned w, std::size_t lo, std::size_t hi) {
    const std::size_t from = lo == 0 ? 0 : lo - 1;
    join(found[w], kernels.check_offsets(off + from, kWide, hi - from, limit));
  });
  Found all;
  for (const Found& f : found) {
    if (f.took) join(all, f.check);
  }
  return all.check;
}

// Offsets must be n + 1 non-negative, non-decreasing values within data.
// Device-resident offsets are validated by the CUDA backend before it writes.
template <class Offset>
detail::KeyBatch strings(StringBatch<Offset> s, detail::KeyKind kind, KeyMemory where) {
  const char* name = sizeof(Offset) == 4 ? "string batch (int32 offsets)" : "string batch (int64 offsets)";
  if (s.offsets.data() == nullptr && !s.offsets.empty()) {
    throw Error(std::string(name) + ": offsets pointer is null with " +
                std::to_string(s.offsets.size()) + " entries");
  }
  if (s.data.data() == nullptr && !s.data.empty()) {
    throw Error(std::string(name) + ": data pointer is null with " + std::to_string(s.data.size()) +
                " bytes");
  }
  detail::KeyBatch b;
  b.kind = kind;
  b.n = s.offsets.empty() ? 0 : s.offsets.size() - 1;
  b.keys = s.offsets.data();
  b.data = s.data.data();
  b.data_size = s.data.size();
  b.memory = static_cast<std::uint8_t>(checked(where, name));
  // Offsets in device memory (said, or detected) are validated on the device.
  if (where == KeyMemory::Device) return b;
  if (where == KeyMemory::Detect && detail::cuda::is_device_pointer(s.offsets.data())) {
    b.offsets_on_device = true;
    return b;
  }
  // One pass over the offsets, vectorised (a batch is checked on every call
  // before the workers start, and a cold one costs its memory traffic here) and
  // split over the bulk call's workers when large. The loop below, which names
  // the first bad offset, runs only when this pass finds something wrong.
  // Non-decreasing from a non-negative first offset, no offset can be negative.
  // The pass also finds fixed-width keys of 8 or 16 bytes (fixed_width), which
  // the kernels would otherwise find by reading each chunk's offsets again
  // (docs/PERF-NOTES.md, "Fixed-width strings found by the batch check").
  const Offset* const off = s.offsets.data();
  const std::size_t m = s.offsets.size();
  const Offset limit = s.data.size() > static_cast<std::uint64_t>(std::numeric_limits<Offset>::max())
                           ? std::numeric_limits<Offset>::max()
                           : static_cast<Offset>(s.data.size());
  const detail::OffsetsCheck check = check_offsets(off, m, limit);
  if (check.in_order) {
    b.fixed_width = check.fixed_width;
    return b;
  }
  for (std::size_t i = 0; i < s.offsets.size(); ++i) {
    const Offset o = s.offsets[i];
    if (o < 0 || static_cast<std::uint64_t>(o) > s.data.size()) {
      throw Error(std::string(name) + ": offsets[" + std::to_string(i) + "] = " + std::to_string(o) +
                  " is outside the data (0 .. " + std::to_string(s.data.size()) + ")");
    }
    if (i > 0 && o < s.offsets[i - 1]) {
      throw Error(std::string(name) + ": offsets[" + std::to_string(i) + "] = " + std::to_string(o) +
                  " is less than offsets[" + std::to_string(i - 1) + "] = " +
                  std::to_string(s.offsets[i - 1]));
    }
  }
  return b;
}

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a);
  const auto y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes != 0 && b_bytes != 0 && x < y + b_bytes && y < x + a_bytes;
}

std::size_t key_array_bytes(const detail::KeyBatch& kb) {
  switch (kb.kind) {
    case detail::KeyKind::U32:
      return kb.n * sizeof(std::uint32_t);
    case detail::KeyKind::U64:
    case detail::KeyKind::Prehashed:
      return kb.n * sizeof(std::uint64_t);
    case detail::KeyKind::Offsets32:
      return (kb.n + 1) * sizeof(std::int32_t);
    case detail::KeyKind::Offsets64:
      return (kb.n + 1) * sizeof(std::int64_t);
    case detail::KeyKind::Views:
      return kb.n * sizeof(std::string_view);
  }
  return 0;
}

}  // namespace

void detail::require_keys_apart(const KeyBatch& keys, const void* p, std::size_t bytes, const char* op,
                                const char* what) {
  if (keys.n == 0) return;  // reads nothing
  const bool strings = has_offsets(keys.kind);
  if (overlap(keys.keys, key_array_bytes(keys), p, bytes) ||
      (strings && overlap(keys.data, keys.data_size, p, bytes))) {
    throw Error(std::string(op) + ": the keys overlap " + what);
  }
}

Keys::Keys(std::span<const std::uint32_t> keys, KeyMemory where)
    : batch_(fixed_width(keys, detail::KeyKind::U32, where, "uint32")) {}
Keys::Keys(std::span<const std::uint64_t> keys, KeyMemory where)
    : batch_(fixed_width(keys, detail::KeyKind::U64, where, "uint64")) {}
Keys::Keys(Prehashed keys, KeyMemory where)
    : batch_(fixed_width(keys.hashes, detail::KeyKind::Prehashed, where, "pre-hashed")) {}
Keys::Keys(StringBatch<std::int32_t> keys, KeyMemory where)
    : batch_(strings(keys, detail::KeyKind::Offsets32, where)) {}
Keys::Keys(StringBatch<std::int64_t> keys, KeyMemory where)
    : batch_(strings(keys, detail::KeyKind::Offsets64, where)) {}
Keys::Keys(std::span<const std::string_view> keys)
    : batch_(fixed_width(keys, detail::KeyKind::Views, KeyMemory::Host, "string_view")) {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i].data() == nullptr && !keys[i].empty()) {
      throw Error("string_view batch: key " + std::to_string(i) + " has a null pointer and " +
                  std::to_string(keys[i].size()) + " bytes");
    }
  }
}

}  // namespace probkit
