// Internal: what the CUDA backend (cuda/) offers the rest of the library.
// Plain types only, so that src/ compiles without the CUDA headers; when
// probkit is built without CUDA, src/cuda_stub.cc implements these by
// throwing (no device-resident object can exist then).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "probkit/backend.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/error.hpp"
#include "probkit/keys.hpp"

struct CUstream_st;

namespace probkit::detail::cuda {

// Device memory (cudaMalloc on `device`); AllocationError with CUDA's text
// when the device has not the memory, Error for any other failure.
void* alloc(std::size_t bytes, int device);
void free(void* p, int device) noexcept;
// Synchronous copy in any direction (unified addressing decides).
void copy(void* dst, const void* src, std::size_t bytes);
void zero(void* p, std::size_t bytes, int device);
// Whether p points into device (or managed) memory; false for host memory,
// for pointers CUDA does not know, and in builds without CUDA.
bool is_device_pointer(const void* p);
// "cuda:N <device name>", for last_served().
std::string device_label(int device);

// Host-resident objects read keys on the CPU: keys said or detected to be in
// device memory are an error there, not a crash. A string batch's offsets
// were looked up when it was made (KeyBatch::offsets_on_device); its bytes,
// and fixed-width keys, are looked up here (one pointer query per call, none
// in builds without CUDA).
inline void require_host_keys(const KeyBatch& keys, const char* op) {
  const bool strings = has_offsets(keys.kind);
  const bool detected = keys.memory == static_cast<std::uint8_t>(KeyMemory::Detect) &&
                        (keys.offsets_on_device || (keys.n != 0 && keys.kind != KeyKind::Views &&
                                                    is_device_pointer(strings ? keys.data : keys.keys)));
  if (detected || keys.memory == static_cast<std::uint8_t>(KeyMemory::Device)) {
    throw Error(std::string(op) + ": the keys are in device memory but the object is in host memory; "
                "move it with to_device() first");
  }
}

// Host-resident objects write their per-key output (or count) on the CPU: an
// output in device memory is an error there, not a store through a device
// pointer, which faults on a GPU. One pointer query per call that has an
// output (none in builds without CUDA).
inline void require_host_output(const void* out, const char* op) {
  if (out == nullptr || !is_device_pointer(out)) return;
  throw Error(std::string(op) + ": the output is in device memory but the object is in host memory; "
              "move the object with to_device() first, or pass host memory");
}

// Throws unless `requested` (after PROBKIT_BACKEND for Auto) may serve a
// device-resident object: only Auto and Cuda can.
void require_device_backend(Backend requested);

// Where and how a bulk call runs: the object's device, the caller's stream,
// and whether to wait for the stream before returning.
struct Launch {
  int device = 0;
  CUstream_st* stream = nullptr;
  bool wait = true;
};

// Bulk operations on a device-resident filter or sketch. Keys may be in host
// or device memory (KeyBatch::memory, Detect resolved here); host keys are
// streamed through pinned staging buffers. Inputs are validated before
// anything is written; a CUDA error after the first chunk's launch leaves
// the chunks before it applied (include/probkit/error.hpp).
void bloom_add(const BloomRef& f, const KeyBatch& keys, HashSpec spec, const Launch& l);
// out (host or device memory, keys.n bytes) and/or *count (host or device) may be null.
void bloom_contains(const BloomRef& f, const KeyBatch& keys, HashSpec spec, std::uint8_t* out,
                    std::uint64_t* count, const Launch& l);
// dst[i] = dst[i] | src[i] (or &), `words` 32-bit words, both on l.device.
void bloom_combine(std::uint32_t* dst, const std::uint32_t* src, std::size_t words, bool intersect,
                   const Launch& l);
void hll_add(std::uint8_t* registers, std::uint32_t p, const KeyBatch& keys, HashSpec spec,
             const Launch& l);
// dst[j] = max(dst[j], src[j]) over n registers, both on l.device.
void hll_max(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, const Launch& l);
// The register histogram C[0 .. 65-p] (66 - p entries) into host memory; waits.
void hll_histogram(const std::uint8_t* registers, std::uint32_t p, std::uint32_t* out, const Launch& l);

}  // namespace probkit::detail::cuda
