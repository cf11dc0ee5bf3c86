// HyperLogLog kernels (DESIGN.md §4): register updates from the layout
// functions in include/probkit/layout/hll.hpp, and the register histogram
// from which the host computes the estimate.
#include <cstdint>

#include "keys.cuh"
#include "launch.hpp"
#include "probkit/layout/hll.hpp"

namespace probkit::detail::cuda {
namespace {

constexpr unsigned kThreads = 256;
// The shared-copy kernel runs CTAs of 1024 threads, one or two per SM: on one
// H200 (p = 14, 10^9 u64 keys) 2.59 ms against 3.0 ms with 256-thread CTAs,
// three per SM (fewer CTAs also means fewer copies merged at the end). A
// variant that hashed and did not touch the registers took 2.6 ms: the add
// is then bound by XXH64's 64-bit multiplies, not by the sketch.
constexpr unsigned kSharedThreads = 1024;
constexpr int kBatch = 8;  // keys whose loads a thread has in flight at once

// Registers are bytes; CUDA has no byte atomics. A byte-wise max into the
// containing 32-bit word by compare-and-swap (`cand` holds the new values in
// their byte lanes, zero elsewhere). Reads first: most updates change nothing.
__device__ __forceinline__ void atomic_max_bytes(std::uint32_t* word, std::uint32_t cand) {
  std::uint32_t old = *reinterpret_cast<volatile std::uint32_t*>(word);
  while (true) {
    const std::uint32_t next = __vmaxu4(old, cand);
    if (next == old) return;
    const std::uint32_t prev = atomicCAS(word, old, next);
    if (prev == old) return;
    old = prev;
  }
}

// Each CTA keeps a private copy of the sketch in shared memory, one 32-bit
// word per register so that atomicMax applies, and merges it into the
// global byte registers once at the end (4 registers per CAS).
template <KeyKind K>
__global__ void __launch_bounds__(kSharedThreads)
    hll_add_shared_kernel(std::uint8_t* registers, std::uint32_t p, DeviceKeys keys, HashSpec spec) {
  extern __shared__ std::uint32_t local[];
  const std::uint32_t m = 1u << p;
  for (std::uint32_t j = threadIdx.x; j < m; j += blockDim.x) local[j] = 0;
  __syncthreads();
  for_each_key_hash<K, kBatch>(keys, spec, [&](std::size_t, std::uint64_t h) {
    const std::uint32_t j = layout::hll_index(h, p);
    const std::uint32_t r = layout::hll_rank(h, p);
    if (local[j] < r) atomicMax(local + j, r);
  });
  __syncthreads();
  auto* words = reinterpret_cast<std::uint32_t*>(registers);
  for (std::uint32_t w = threadIdx.x; w < m / 4; w += blockDim.x) {
    const std::uint32_t cand = local[4 * w] | local[4 * w + 1] << 8 | local[4 * w + 2] << 16 |
                               local[4 * w + 3] << 24;
    if (cand != 0) atomic_max_bytes(words + w, cand);
  }
}

// When 4 * 2^p bytes exceed a CTA's shared memory: straight to global memory.
template <KeyKind K>
__global__ void __launch_bounds__(kThreads)
    hll_add_global_kernel(std::uint8_t* registers, std::uint32_t p, DeviceKeys keys, HashSpec spec) {
  auto* words = reinterpret_cast<std::uint32_t*>(registers);
  for_each_key_hash<K, kBatch>(keys, spec, [&](std::size_t, std::uint64_t h) {
    const std::uint32_t j = layout::hll_index(h, p);
    const std::uint32_t r = layout::hll_rank(h, p);
    atomic_max_bytes(words + j / 4, r << (8 * (j % 4)));
  });
}

__global__ void hll_max_kernel(std::uint32_t* dst, const std::uint32_t* src, std::size_t n) {
  for (std::size_t i = global_thread(); i < n; i += grid_threads()) dst[i] = __vmaxu4(dst[i], src[i]);
}

// Integer counts only: the estimate is computed on the host from these, so
// every backend yields the same double.
__global__ void hll_histogram_kernel(const std::uint8_t* registers, std::uint32_t m, std::uint32_t bins,
                                     std::uint32_t* hist) {
  __shared__ std::uint32_t local[64];
  for (std::uint32_t r = threadIdx.x; r < bins; r += blockDim.x) local[r] = 0;
  __syncthreads();
  for (std::size_t j = global_thread(); j < m; j += grid_threads()) {
    const std::uint32_t r = registers[j];
    atomicAdd(local + (r < bins ? r : bins - 1), 1u);  // ranks never exceed 65 - p
  }
  __syncthreads();
  for (std::uint32_t r = threadIdx.x; r < bins; r += blockDim.x) {
    if (local[r] != 0) atomicAdd(hist + r, local[r]);
  }
}

}  // namespace

cudaError_t launch_hll_add(std::uint8_t* registers, std::uint32_t p, const DeviceKeys& keys,
                           HashSpec spec, int sm_count, std::size_t shared_optin, cudaStream_t s) {
  if (keys.n == 0) return cudaSuccess;
  const std::size_t m = std::size_t{1} << p;
  const std::size_t shared = 4 * m;
  return with_kind(keys.kind, [&](auto kind) -> cudaError_t {
    constexpr KeyKind K = decltype(kind)::value;
    if (shared > shared_optin) {
      hll_add_global_kernel<K><<<grid_for(keys.n, kThreads, sm_count), kThreads, 0, s>>>(registers, p, keys, spec);
      return cudaGetLastError();
    }
    auto* kernel = &hll_add_shared_kernel<K>;
    // The limit belongs to the kernel, for every thread of the process: set
    // to what the largest precision that fits asks, the same value from
    // every call, it cannot drop under a launch of another thread (set for
    // p = 10 between this call's setting for p = 14 and its launch, it
    // failed the launch). A launch still takes only its own `shared` bytes.
    std::size_t limit = 4 * 16;
    while (2 * limit <= shared_optin && limit < 4 * (std::size_t{1} << 18)) limit *= 2;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         static_cast<int>(limit));
    if (e != cudaSuccess) return e;
    int per_sm = 0;
    e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kSharedThreads, shared);
    if (e != cudaSuccess) return e;
    // Every CTA zeroes and merges m registers: give each at least 4m keys.
    const std::size_t by_keys = (keys.n + 4 * m - 1) / (4 * m);
    const std::size_t full = static_cast<std::size_t>(sm_count) * (per_sm > 0 ? per_sm : 1);
    const auto grid = static_cast<unsigned>(by_keys < full ? by_keys : full);
    kernel<<<grid, kSharedThreads, shared, s>>>(registers, p, keys, spec);
    return cudaGetLastError();
  });
}

cudaError_t launch_hll_max(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, int sm_count,
                           cudaStream_t s) {
  const std::size_t words = n / 4;  // n = 2^p >= 16
  hll_max_kernel<<<grid_for(words, kThreads, sm_count), kThreads, 0, s>>>(
      reinterpret_cast<std::uint32_t*>(dst), reinterpret_cast<const std::uint32_t*>(src), words);
  return cudaGetLastError();
}

cudaError_t launch_hll_histogram(const std::uint8_t* registers, std::uint32_t p, std::uint32_t* hist,
                                 int sm_count, cudaStream_t s) {
  const std::uint32_t m = 1u << p;
  hll_histogram_kernel<<<grid_for(m, kThreads, sm_count), kThreads, 0, s>>>(registers, m, 66 - p, hist);
  return cudaGetLastError();
}

}  // namespace probkit::detail::cuda
