// Bulk operations on device-resident filters and sketches: resolves where
// the keys live, validates device string offsets, streams host keys through
// pinned staging buffers (copies on a second stream overlap the kernels on
// the caller's stream), and launches the kernels of cuda/*.cu.
#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>

#include "cuda_backend.hpp"
#include "launch.hpp"
#include "probkit/backend.hpp"
#include "probkit/error.hpp"
#include "probkit/keys.hpp"
#include "runtime.hpp"
#include "worker_pool.hpp"

namespace probkit::detail::cuda {
namespace {

// One staged chunk: 4 Mi keys (32 MiB of u64 keys) and up to 64 MiB of string
// bytes per buffer, two buffers deep: big enough to run at copy bandwidth,
// small enough to pin cheaply.
// (tests/cuda_sim shrinks them to run many chunks on small batches.)
#ifndef PROBKIT_CUDA_CHUNK_KEYS
#define PROBKIT_CUDA_CHUNK_KEYS (std::size_t{1} << 22)
#endif
#ifndef PROBKIT_CUDA_CHUNK_BYTES
#define PROBKIT_CUDA_CHUNK_BYTES (std::size_t{64} << 20)
#endif
constexpr std::size_t kChunkKeys = PROBKIT_CUDA_CHUNK_KEYS;
constexpr std::size_t kChunkBytes = PROBKIT_CUDA_CHUNK_BYTES;
constexpr int kSlots = 2;
// Packing a chunk into its pinned buffer is a memcpy that several threads
// share, in pieces of at least this much: one core's memcpy into pinned
// memory moved 6 GB/s on the lent H200's host, an eighth of what its bus then
// took from page-locked memory (54 GB/s).
constexpr std::size_t kPackPiece = std::size_t{4} << 20;
constexpr int kHostMemory = -1;
constexpr int kManagedMemory = -2;

bool is_string(KeyKind k) { return k == KeyKind::Offsets32 || k == KeyKind::Offsets64 || k == KeyKind::Views; }

std::size_t key_width(KeyKind k) { return k == KeyKind::U32 ? 4 : 8; }

// kHostMemory for host memory (pinned or not) and pointers CUDA does not
// know, kManagedMemory for managed memory, else the device holding it.
int residence(const void* p) {
  if (p == nullptr) return kHostMemory;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return kHostMemory;
  }
  if (a.type == cudaMemoryTypeDevice) return a.device;
  if (a.type == cudaMemoryTypeManaged) return kManagedMemory;
  return kHostMemory;
}

void require_same_device(int where, int device, const char* what) {
  if (where >= 0 && where != device) {
    throw Error(std::string(what) + " are in the memory of CUDA device " + std::to_string(where) +
                " but the object lives on device " + std::to_string(device));
  }
}

// Whether [p, p + bytes) starts and ends in page-locked host memory
// (cudaMallocHost, cudaHostAlloc, cudaHostRegister): the copy engine can then
// read it in place, with no pass through a staging buffer. (Both ends: a
// range that is only partly registered is staged like pageable memory.)
bool page_locked(const void* p, std::size_t bytes) {
  const auto pinned = [](const void* q) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, q) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return a.type == cudaMemoryTypeHost;
  };
  return bytes != 0 && pinned(p) && pinned(static_cast<const std::uint8_t*>(p) + bytes - 1);
}

// Whether a kernel can read the batch where it is; false means it is staged.
bool keys_in_device_memory(const KeyBatch& k, int device) {
  if (k.kind == KeyKind::Views) return false;
  switch (static_cast<KeyMemory>(k.memory)) {
    case KeyMemory::Host: return false;
    case KeyMemory::Device: return true;
    case KeyMemory::Detect: break;
  }
  if (k.n == 0 && !is_string(k.kind)) return false;
  const int where = residence(k.keys);
  if (is_string(k.kind) && k.data_size > 0) {
    const int data_where = residence(k.data);
    if ((where == kHostMemory) != (data_where == kHostMemory)) {
      throw Error("string batch: offsets and data must both be in host memory or both in device memory");
    }
    require_same_device(data_where, device, "string bytes");
  }
  if (where == kHostMemory) return false;
  require_same_device(where, device, "keys");
  return true;
}

// Bytes of one element of the keys array a kernel reads: a key, or a string's offset.
std::size_t element_width(KeyKind kind) { return kind == KeyKind::Offsets32 || kind == KeyKind::U32 ? 4 : 8; }

// Keys in device memory aligned to their width, as C++ requires of a typed
// pointer: the kernels load keys and offsets as typed words, and a GPU faults
// on a misaligned one with an error that ends every later CUDA call of the
// process (cudaErrorMisalignedAddress is sticky). Host keys are staged into
// aligned buffers, or read by the copy engine, which takes any address.
void require_aligned_device_keys(const KeyBatch& k) {
  const std::size_t width = element_width(k.kind);
  const auto address = reinterpret_cast<std::uintptr_t>(k.keys);
  if (address % width == 0) return;
  throw Error(std::string(is_string(k.kind) ? "string offsets" : "keys") + " in device memory at address " +
              std::to_string(address) + " are not aligned to their " + std::to_string(width) +
              "-byte width, as a typed pointer must be");
}

// Frees a stream-ordered allocation when the scope ends (also on throw).
struct AsyncBuffer {
  void* ptr = nullptr;
  cudaStream_t stream = nullptr;
  AsyncBuffer(std::size_t bytes, cudaStream_t s, const char* what) : stream(s) {
    check(cudaMallocAsync(&ptr, bytes, s), what);
  }
  ~AsyncBuffer() {
    if (ptr != nullptr) (void)cudaFreeAsync(ptr, stream);
  }
  AsyncBuffer(const AsyncBuffer&) = delete;
  AsyncBuffer& operator=(const AsyncBuffer&) = delete;
  template <class T>
  T* as() const { return static_cast<T*>(ptr); }
};

template <class Offset>
std::int64_t fetch_offset(const void* offsets, std::size_t i) {
  Offset v{};
  copy(&v, static_cast<const Offset*>(offsets) + i, sizeof v);
  return static_cast<std::int64_t>(v);
}

// Offsets in device memory are checked on the device before any kernel reads
// the strings; this waits for the stream so that the error can be thrown.
void validate_device_strings(const KeyBatch& k, const DeviceInfo& info, cudaStream_t s) {
  const DeviceKeys dk{k.kind, k.n, k.keys, k.data};
  unsigned long long first_bad = ~0ULL;
  {
    AsyncBuffer bad(sizeof first_bad, s, "validating device string offsets");
    check(cudaMemsetAsync(bad.ptr, 0xff, sizeof first_bad, s), "validating device string offsets");
    check(launch_validate_offsets(dk, k.data_size, bad.as<unsigned long long>(), info.sm_count, s),
          "validating device string offsets");
    check(cudaMemcpyAsync(&first_bad, bad.ptr, sizeof first_bad, cudaMemcpyDeviceToHost, s),
          "validating device string offsets");
  }
  check(cudaStreamSynchronize(s), "validating device string offsets");
  if (first_bad == ~0ULL) return;
  const bool wide = k.kind == KeyKind::Offsets64;
  const char* name = wide ? "string batch (int64 offsets, device)" : "string batch (int32 offsets, device)";
  const auto at = [&](std::size_t i) { return wide ? fetch_offset<std::int64_t>(k.keys, i) : fetch_offset<std::int32_t>(k.keys, i); };
  const std::size_t i = first_bad;
  const std::int64_t o = at(i);
  if (o < 0 || static_cast<std::uint64_t>(o) > k.data_size) {
    throw Error(std::string(name) + ": offsets[" + std::to_string(i) + "] = " + std::to_string(o) +
                " is outside the data (0 .. " + std::to_string(k.data_size) + ")");
  }
  throw Error(std::string(name) + ": offsets[" + std::to_string(i) + "] = " + std::to_string(o) +
              " is less than offsets[" + std::to_string(i - 1) + "] = " + std::to_string(at(i - 1)));
}

// fn(keys of one chunk in device memory, index of its first key, where the
// chunk's per-key output goes in device memory or null) enqueues the kernel.
using ChunkFn = std::function<cudaError_t(const DeviceKeys&, std::size_t, std::uint8_t*)>;

// Streams a batch whose keys and/or per-key output are in host memory through
// two pinned buffers (one, for a batch of one chunk): while the kernel of
// chunk c runs on the caller's stream, chunk c + 1 is copied on a second
// stream and chunk c + 2 is packed on the host. Fixed-width keys that are already page-locked skip the pack:
// the copy engine reads them where they are (the pack, a memcpy on the host,
// is slower than the bus even with several threads sharing it).
class Stager {
 public:
  // (probkit::threads() is read here, before any chunk is launched: a bad
  // PROBKIT_THREADS throws with nothing applied.)
  Stager(const KeyBatch& k, bool keys_on_device, std::uint8_t* host_out, cudaStream_t stream)
      : k_(k), keys_on_device_(keys_on_device), host_out_(host_out), stream_(stream), pack_threads_(threads()) {}

  ~Stager() {
    // Nothing may still write into the pinned buffers when they are freed.
    if (copy_stream_ != nullptr) (void)cudaStreamSynchronize(copy_stream_);
    if (host_out_ != nullptr && !drained_) (void)cudaStreamSynchronize(stream_);
    for (Slot& s : slots_) {
      for (void* p : {s.host_keys, s.host_data, static_cast<void*>(s.host_out)}) {
        if (p != nullptr) (void)cudaFreeHost(p);
      }
      for (void* p : {s.dev_keys, s.dev_data, static_cast<void*>(s.dev_out)}) {
        if (p != nullptr) (void)cudaFreeAsync(p, stream_);
      }
      for (cudaEvent_t e : {s.copied, s.consumed, s.out_ready}) {
        if (e != nullptr) (void)cudaEventDestroy(e);
      }
    }
    if (ready_ != nullptr) (void)cudaEventDestroy(ready_);
    if (copy_stream_ != nullptr) (void)cudaStreamDestroy(copy_stream_);
  }
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;

  void run(const ChunkFn& fn) {
    allocate();
    std::size_t first = 0;
    for (std::size_t c = 0; first < k_.n; ++c) {
      Slot& s = slots_[c % slots_in_use_];
      const std::size_t end = chunk_end(first);
      retire(s);
      DeviceKeys dk;
      if (keys_on_device_) {
        dk = device_view(first, end);
      } else {
        const std::size_t key_bytes = is_string(k_.kind) ? (end - first + 1) * 8 : (end - first) * key_width(k_.kind);
        const void* source =
            keys_page_locked_ ? static_cast<const std::uint8_t*>(k_.keys) + first * key_width(k_.kind) : s.host_keys;
        const std::size_t data_bytes = keys_page_locked_ ? 0 : pack(s, first, end);
        if (s.used) check(cudaStreamWaitEvent(copy_stream_, s.consumed, 0), "staging keys");
        check(cudaMemcpyAsync(s.dev_keys, source, key_bytes, cudaMemcpyHostToDevice, copy_stream_), "staging keys");
        if (data_bytes != 0) {
          check(cudaMemcpyAsync(s.dev_data, s.host_data, data_bytes, cudaMemcpyHostToDevice, copy_stream_),
                "staging string bytes");
        }
        check(cudaEventRecord(s.copied, copy_stream_), "staging keys");
        check(cudaStreamWaitEvent(stream_, s.copied, 0), "staging keys");
        dk = DeviceKeys{is_string(k_.kind) ? KeyKind::Offsets64 : k_.kind, end - first, s.dev_keys,
                        static_cast<const std::uint8_t*>(s.dev_data)};
      }
      check(fn(dk, first, host_out_ != nullptr ? s.dev_out : nullptr), "launching a kernel");
      if (host_out_ != nullptr) {
        check(cudaMemcpyAsync(s.host_out, s.dev_out, end - first, cudaMemcpyDeviceToHost, stream_), "returning results");
        check(cudaEventRecord(s.out_ready, stream_), "returning results");
        s.out_first = first;
        s.out_count = end - first;
      }
      check(cudaEventRecord(s.consumed, stream_), "staging keys");
      s.used = true;
      first = end;
    }
    for (Slot& s : slots_) retire(s);
    drained_ = true;
  }

 private:
  struct Slot {
    void* host_keys = nullptr;
    void* host_data = nullptr;
    std::uint8_t* host_out = nullptr;
    void* dev_keys = nullptr;
    void* dev_data = nullptr;
    std::uint8_t* dev_out = nullptr;
    cudaEvent_t copied = nullptr;     // host -> device copies of this slot done
    cudaEvent_t consumed = nullptr;   // the kernel reading this slot's device buffers done
    cudaEvent_t out_ready = nullptr;  // this slot's results are back in host_out
    std::size_t out_first = 0, out_count = 0;
    bool used = false;
  };

  std::size_t string_bytes(std::size_t i) const {
    switch (k_.kind) {
      case KeyKind::Offsets32: {
        const auto* o = static_cast<const std::int32_t*>(k_.keys);
        return static_cast<std::size_t>(o[i + 1] - o[i]);
      }
      case KeyKind::Offsets64: {
        const auto* o = static_cast<const std::int64_t*>(k_.keys);
        return static_cast<std::size_t>(o[i + 1] - o[i]);
      }
      default: return static_cast<const std::string_view*>(k_.keys)[i].size();
    }
  }

  void allocate() {
    const std::size_t chunk = std::min(k_.n, kChunkKeys);
    bool one_chunk = k_.n <= kChunkKeys;
    if (!keys_on_device_ && is_string(k_.kind)) {
      // The byte buffer holds a chunk's strings, and at least the longest one.
      std::size_t total = 0, longest = 0;
      for (std::size_t i = 0; i < k_.n; ++i) {
        const std::size_t b = string_bytes(i);
        total += b;
        longest = std::max(longest, b);
      }
      data_cap_ = std::max<std::size_t>(1, std::min(total, std::max(kChunkBytes, longest)));
      one_chunk = one_chunk && total <= data_cap_;
    }
    // A batch of one chunk has nothing to overlap: a second slot would be
    // allocated (pinned and on the device, as large as the first: for one
    // string of 10 GB, 20 GB more) and never used.
    slots_in_use_ = one_chunk ? 1 : kSlots;
    const std::size_t key_cap = keys_on_device_ ? 0 : is_string(k_.kind) ? (chunk + 1) * 8 : chunk * key_width(k_.kind);
    keys_page_locked_ = key_cap != 0 && !is_string(k_.kind) && page_locked(k_.keys, k_.n * key_width(k_.kind));
    check(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking), "creating the copy stream");
    for (int i = 0; i < slots_in_use_; ++i) {
      Slot& s = slots_[i];
      if (key_cap != 0) {
        if (!keys_page_locked_) check(cudaMallocHost(&s.host_keys, key_cap), "pinning a staging buffer");
        check(cudaMallocAsync(&s.dev_keys, key_cap, stream_), "allocating a staging buffer");
      }
      if (data_cap_ != 0) {
        check(cudaMallocHost(&s.host_data, data_cap_), "pinning a staging buffer");
        check(cudaMallocAsync(&s.dev_data, data_cap_, stream_), "allocating a staging buffer");
      }
      if (host_out_ != nullptr) {
        check(cudaMallocHost(reinterpret_cast<void**>(&s.host_out), chunk), "pinning a result buffer");
        check(cudaMallocAsync(reinterpret_cast<void**>(&s.dev_out), chunk, stream_), "allocating a result buffer");
      }
      for (cudaEvent_t* e : {&s.copied, &s.consumed, &s.out_ready}) {
        check(cudaEventCreateWithFlags(e, cudaEventDisableTiming), "creating an event");
      }
    }
    // The copies run on another stream: they start after the allocations.
    check(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "creating an event");
    check(cudaEventRecord(ready_, stream_), "staging keys");
    check(cudaStreamWaitEvent(copy_stream_, ready_, 0), "staging keys");
  }

  // Before a slot is reused: its pinned keys are copied, its results copied out.
  void retire(Slot& s) {
    if (!s.used) return;
    if (!keys_on_device_) check(cudaEventSynchronize(s.copied), "staging keys");
    if (host_out_ != nullptr && s.out_count != 0) {
      check(cudaEventSynchronize(s.out_ready), "returning results");
      std::memcpy(host_out_ + s.out_first, s.host_out, s.out_count);
      s.out_count = 0;
    }
  }

  std::size_t chunk_end(std::size_t first) const {
    const std::size_t end = std::min(k_.n, first + kChunkKeys);
    if (keys_on_device_ || !is_string(k_.kind)) return end;
    std::size_t bytes = 0;
    std::size_t e = first;
    while (e < end) {
      const std::size_t b = string_bytes(e);
      if (e > first && bytes + b > data_cap_) break;
      bytes += b;
      ++e;
    }
    return e;
  }

  DeviceKeys device_view(std::size_t first, std::size_t end) const {
    const auto* base = static_cast<const std::uint8_t*>(k_.keys);
    const std::size_t width = element_width(k_.kind);
    // String offsets index the whole data buffer, so a chunk only moves them.
    return DeviceKeys{k_.kind, end - first, base + first * width, k_.data};
  }

  // Copies keys [first, end) into the slot's pinned buffers; strings become
  // int64 offsets rebased to the chunk. Returns the string bytes packed.
  std::size_t pack(Slot& s, std::size_t first, std::size_t end) const {
    const std::size_t count = end - first;
    if (!is_string(k_.kind)) {
      const std::size_t w = key_width(k_.kind);
      parallel_copy(s.host_keys, static_cast<const std::uint8_t*>(k_.keys) + first * w, count * w, pack_threads_,
                    kPackPiece);
      return 0;
    }
    auto* off = static_cast<std::int64_t*>(s.host_keys);
    auto* data = static_cast<std::uint8_t*>(s.host_data);
    if (k_.kind == KeyKind::Views) {
      const auto* v = static_cast<const std::string_view*>(k_.keys) + first;
      std::size_t pos = 0;
      for (std::size_t i = 0; i < count; ++i) {
        off[i] = static_cast<std::int64_t>(pos);
        if (!v[i].empty()) std::memcpy(data + pos, v[i].data(), v[i].size());
        pos += v[i].size();
      }
      off[count] = static_cast<std::int64_t>(pos);
      return pos;
    }
    const auto rebase = [&](const auto* o) {
      const auto lo = static_cast<std::int64_t>(o[first]);
      for (std::size_t i = 0; i <= count; ++i) off[i] = static_cast<std::int64_t>(o[first + i]) - lo;
      const auto bytes = static_cast<std::size_t>(off[count]);
      parallel_copy(data, k_.data + lo, bytes, pack_threads_, kPackPiece);
      return bytes;
    };
    return k_.kind == KeyKind::Offsets32 ? rebase(static_cast<const std::int32_t*>(k_.keys))
                                         : rebase(static_cast<const std::int64_t*>(k_.keys));
  }

  const KeyBatch& k_;
  const bool keys_on_device_;
  std::uint8_t* const host_out_;
  const cudaStream_t stream_;
  cudaStream_t copy_stream_ = nullptr;
  cudaEvent_t ready_ = nullptr;
  std::size_t data_cap_ = 0;
  bool keys_page_locked_ = false;  // fixed-width host keys the copy engine reads in place
  const unsigned pack_threads_;    // threads that copy keys into the staging buffers
  Slot slots_[kSlots];
  int slots_in_use_ = kSlots;  // 1 for a batch of one chunk (allocate())
  bool drained_ = false;
};

// Runs fn over the whole batch: directly when keys and output are where a
// kernel can reach them, else through a Stager.
void run_bulk(const KeyBatch& k, std::uint8_t* out, const Launch& l, const DeviceInfo& info, const ChunkFn& fn) {
  if (k.n == 0) return;
  const bool keys_dev = keys_in_device_memory(k, l.device);
  if (keys_dev) require_aligned_device_keys(k);
  bool out_dev = false;
  if (out != nullptr) {
    const int where = residence(out);
    require_same_device(where, l.device, "results");
    out_dev = where != kHostMemory;
  }
  if (keys_dev && is_string(k.kind)) validate_device_strings(k, info, l.stream);
  if (keys_dev && (out == nullptr || out_dev)) {
    check(fn(DeviceKeys{k.kind, k.n, k.keys, k.data}, 0, out), "launching a kernel");
    return;
  }
  Stager stager(k, keys_dev, out_dev ? nullptr : out, l.stream);
  if (out_dev) {
    // Output on the device, keys staged: each chunk writes its slice directly.
    stager.run([&](const DeviceKeys& dk, std::size_t first, std::uint8_t*) { return fn(dk, first, out + first); });
  } else {
    stager.run(fn);
  }
}

void finish(const Launch& l, const char* what) {
  check(cudaGetLastError(), what);
  if (l.wait) check(cudaStreamSynchronize(l.stream), what);
}

}  // namespace

void bloom_add(const BloomRef& f, const KeyBatch& keys, HashSpec spec, const Launch& l) {
  DeviceGuard guard(l.device);
  const DeviceInfo& info = device_info(l.device);
  run_bulk(keys, nullptr, l, info, [&](const DeviceKeys& dk, std::size_t, std::uint8_t*) {
    return launch_bloom_add(f, dk, spec, info.sm_count, l.stream);
  });
  finish(l, "bloom add on CUDA");
}

void bloom_contains(const BloomRef& f, const KeyBatch& keys, HashSpec spec, std::uint8_t* out,
                    std::uint64_t* count, const Launch& l) {
  DeviceGuard guard(l.device);
  const DeviceInfo& info = device_info(l.device);
  static_assert(sizeof(std::uint64_t) == sizeof(unsigned long long));
  if (count == nullptr) {
    run_bulk(keys, out, l, info, [&](const DeviceKeys& dk, std::size_t, std::uint8_t* o) {
      return launch_bloom_contains(f, dk, spec, o, nullptr, info.sm_count, l.stream);
    });
  } else {
    AsyncBuffer hits(sizeof(unsigned long long), l.stream, "bloom count on CUDA");
    check(cudaMemsetAsync(hits.ptr, 0, sizeof(unsigned long long), l.stream), "bloom count on CUDA");
    run_bulk(keys, out, l, info, [&](const DeviceKeys& dk, std::size_t, std::uint8_t* o) {
      return launch_bloom_contains(f, dk, spec, o, hits.as<unsigned long long>(), info.sm_count, l.stream);
    });
    check(cudaMemcpyAsync(count, hits.ptr, sizeof(unsigned long long), cudaMemcpyDefault, l.stream),
          "bloom count on CUDA");
  }
  finish(l, "bloom contains on CUDA");
}

void bloom_combine(std::uint32_t* dst, const std::uint32_t* src, std::size_t words, bool intersect,
                   const Launch& l) {
  DeviceGuard guard(l.device);
  check(launch_bloom_combine(dst, src, words, intersect, device_info(l.device).sm_count, l.stream),
        intersect ? "bloom intersection on CUDA" : "bloom union on CUDA");
  finish(l, intersect ? "bloom intersection on CUDA" : "bloom union on CUDA");
}

void hll_add(std::uint8_t* registers, std::uint32_t p, const KeyBatch& keys, HashSpec spec, const Launch& l) {
  DeviceGuard guard(l.device);
  const DeviceInfo& info = device_info(l.device);
  run_bulk(keys, nullptr, l, info, [&](const DeviceKeys& dk, std::size_t, std::uint8_t*) {
    return launch_hll_add(registers, p, dk, spec, info.sm_count, info.shared_per_block_optin, l.stream);
  });
  finish(l, "hll add on CUDA");
}

void hll_max(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, const Launch& l) {
  DeviceGuard guard(l.device);
  check(launch_hll_max(dst, src, n, device_info(l.device).sm_count, l.stream), "hll merge on CUDA");
  finish(l, "hll merge on CUDA");
}

void hll_histogram(const std::uint8_t* registers, std::uint32_t p, std::uint32_t* out, const Launch& l) {
  DeviceGuard guard(l.device);
  const std::size_t bytes = (66 - p) * sizeof(std::uint32_t);
  {
    AsyncBuffer hist(bytes, l.stream, "hll histogram on CUDA");
    check(cudaMemsetAsync(hist.ptr, 0, bytes, l.stream), "hll histogram on CUDA");
    check(launch_hll_histogram(registers, p, hist.as<std::uint32_t>(), device_info(l.device).sm_count, l.stream),
          "hll histogram on CUDA");
    check(cudaMemcpyAsync(out, hist.ptr, bytes, cudaMemcpyDefault, l.stream), "hll histogram on CUDA");
  }
  check(cudaStreamSynchronize(l.stream), "hll histogram on CUDA");
}

}  // namespace probkit::detail::cuda
