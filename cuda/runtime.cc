// CUDA runtime plumbing for the rest of the library: device memory, copies,
// pointer residence, device facts, and CUDA errors as probkit::Error.
#include "runtime.hpp"

#include <array>
#include <memory>
#include <mutex>
#include <string>

#include "cuda_backend.hpp"
#include "dispatch.hpp"
#include "probkit/error.hpp"

namespace probkit::detail {

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();  // clear it: "no device" is an answer, not an error
    return 0;
  }
  return n;
}

namespace cuda {

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear non-sticky errors so later calls start clean
  std::string message = std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  if (e == cudaErrorMemoryAllocation) throw AllocationError(message);
  throw Error(message);
}

DeviceGuard::DeviceGuard(int device) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error("backend cuda: no usable CUDA device for device " + std::to_string(device) + ": " +
                cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
  if (device < 0 || device >= n) {
    throw Error("backend cuda: CUDA device " + std::to_string(device) + " does not exist (" + std::to_string(n) +
                " device(s) found)");
  }
  check(cudaGetDevice(&previous_), "cudaGetDevice");
  if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice");
}

DeviceGuard::~DeviceGuard() {
  int now = -1;
  if (cudaGetDevice(&now) == cudaSuccess && now != previous_) (void)cudaSetDevice(previous_);
}

const DeviceInfo& device_info(int device) {
  constexpr int kMaxDevices = 64;
  static std::array<std::unique_ptr<DeviceInfo>, kMaxDevices> cache;
  static std::mutex mutex;
  if (device < 0 || device >= kMaxDevices) throw Error("CUDA device " + std::to_string(device) + " is out of range");
  std::lock_guard lock(mutex);
  if (!cache[device]) {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
    auto info = std::make_unique<DeviceInfo>();
    info->sm_count = prop.multiProcessorCount;
    info->shared_per_block_optin = prop.sharedMemPerBlockOptin;
    info->name = prop.name;
    cache[device] = std::move(info);
  }
  return *cache[device];
}

void* alloc(std::size_t bytes, int device) {
  DeviceGuard guard(device);
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    check(e, ("cudaMalloc of " + std::to_string(bytes) + " bytes on device " + std::to_string(device)).c_str());
  }
  return p;
}

void free(void* p, int device) noexcept {
  if (p == nullptr) return;
  int previous = -1;
  (void)cudaGetDevice(&previous);
  (void)cudaSetDevice(device);
  (void)cudaFree(p);
  if (previous >= 0) (void)cudaSetDevice(previous);
}

void copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault), "cudaMemcpy");
}

void zero(void* p, std::size_t bytes, int device) {
  DeviceGuard guard(device);
  check(cudaMemset(p, 0, bytes), "cudaMemset");
  check(cudaDeviceSynchronize(), "cudaMemset");
}

bool is_device_pointer(const void* p) {
  if (p == nullptr) return false;
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
}

std::string device_label(int device) {
  return "cuda:" + std::to_string(device) + " " + device_info(device).name;
}

void require_device_backend(Backend requested) {
  if (requested == Backend::Auto) {
    const Backend env = backend_from_environment();
    if (env == Backend::Auto || env == Backend::Cuda) return;
    throw Error("PROBKIT_BACKEND=" + std::string(to_string(env)) +
                " cannot serve a device-resident object; call to_host() first or unset it");
  }
  if (requested == Backend::Cuda) return;
  if (requested != Backend::Scalar && requested != Backend::Simd) throw unknown_backend(requested);
  throw Error("backend " + std::string(to_string(requested)) +
              " cannot serve a device-resident object; call to_host() first");
}

}  // namespace cuda
}  // namespace probkit::detail
