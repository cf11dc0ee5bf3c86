// Internal: CUDA runtime helpers shared by the host-side code of the CUDA
// backend (errors as probkit::Error, the current device, device facts).
#pragma once
#include <cuda_runtime_api.h>

#include <string>

namespace probkit::detail::cuda {

// Throws probkit::Error "<what>: <cudaErrorName> (<text>)" unless e == cudaSuccess;
// probkit::AllocationError for cudaErrorMemoryAllocation (device or pinned host memory).
void check(cudaError_t e, const char* what);

// Makes `device` current for a scope and restores the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

struct DeviceInfo {
  int sm_count = 0;
  std::size_t shared_per_block_optin = 0;  // the most dynamic shared memory one CTA may ask for
  std::string name;
};
// Read once per device; throws Error for a device that does not exist.
const DeviceInfo& device_info(int device);

}  // namespace probkit::detail::cuda
