// Internal: the kernel launchers of cuda/*.cu, called by cuda/backend.cc.
// Launchers never throw: they return the launch's cudaError_t.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "probkit/detail/key_batch.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/hash.hpp"

namespace probkit::detail::cuda {

// Keys as a kernel reads them, all in device memory. kind is U32, U64,
// Prehashed, Offsets32 or Offsets64 (host string_views are packed into
// Offsets64 first). String offsets index `data` and are already validated.
struct DeviceKeys {
  KeyKind kind = KeyKind::U64;
  std::size_t n = 0;
  const void* keys = nullptr;
  const std::uint8_t* data = nullptr;
};

// Grid size for a grid-stride kernel over n items: enough CTAs to fill every
// SM, no more than the items need.
unsigned grid_for(std::size_t n, unsigned threads, int sm_count);

cudaError_t launch_bloom_add(const BloomRef& f, const DeviceKeys& keys, HashSpec spec, int sm_count,
                             cudaStream_t s);
// out[i] = 1/0 per key (out may be null); *count += hits (count may be null).
cudaError_t launch_bloom_contains(const BloomRef& f, const DeviceKeys& keys, HashSpec spec,
                                  std::uint8_t* out, unsigned long long* count, int sm_count,
                                  cudaStream_t s);
cudaError_t launch_bloom_combine(std::uint32_t* dst, const std::uint32_t* src, std::size_t words,
                                 bool intersect, int sm_count, cudaStream_t s);

// `shared_optin`: the device's per-CTA dynamic shared memory limit; the
// per-CTA register copy is used when 4 * 2^p bytes fit in it.
cudaError_t launch_hll_add(std::uint8_t* registers, std::uint32_t p, const DeviceKeys& keys,
                           HashSpec spec, int sm_count, std::size_t shared_optin, cudaStream_t s);
cudaError_t launch_hll_max(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, int sm_count,
                           cudaStream_t s);
// hist[r] += number of registers holding r; hist has 66 - p zeroed entries.
cudaError_t launch_hll_histogram(const std::uint8_t* registers, std::uint32_t p, std::uint32_t* hist,
                                 int sm_count, cudaStream_t s);

// *first_bad = min(*first_bad, i) for every offset i (0 .. n) that is
// negative, beyond data_size, or less than offset i - 1. Offsets32/64 only.
cudaError_t launch_validate_offsets(const DeviceKeys& keys, std::size_t data_size,
                                    unsigned long long* first_bad, int sm_count, cudaStream_t s);

}  // namespace probkit::detail::cuda
