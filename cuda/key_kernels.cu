// Validation of Arrow-style string offsets that live in device memory: done
// on the device, before any kernel reads the strings or writes a structure.
#include <cstdint>

#include "keys.cuh"
#include "launch.hpp"

namespace probkit::detail::cuda {
namespace {

constexpr unsigned kThreads = 256;

template <class Offset>
__global__ void validate_offsets_kernel(const Offset* offsets, std::size_t n, std::size_t data_size,
                                        unsigned long long* first_bad) {
  for (std::size_t i = global_thread(); i <= n; i += grid_threads()) {
    const Offset o = offsets[i];
    const bool bad = o < 0 || static_cast<unsigned long long>(o) > data_size || (i > 0 && o < offsets[i - 1]);
    if (bad) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

}  // namespace

cudaError_t launch_validate_offsets(const DeviceKeys& keys, std::size_t data_size,
                                    unsigned long long* first_bad, int sm_count, cudaStream_t s) {
  const unsigned grid = grid_for(keys.n + 1, kThreads, sm_count);
  if (keys.kind == KeyKind::Offsets32) {
    validate_offsets_kernel<<<grid, kThreads, 0, s>>>(static_cast<const std::int32_t*>(keys.keys), keys.n,
                                                      data_size, first_bad);
  } else if (keys.kind == KeyKind::Offsets64) {
    validate_offsets_kernel<<<grid, kThreads, 0, s>>>(static_cast<const std::int64_t*>(keys.keys), keys.n,
                                                      data_size, first_bad);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace probkit::detail::cuda
