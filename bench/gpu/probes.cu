#include "probes.hpp"

namespace probkit::bench {
namespace {

constexpr unsigned kThreads = 256;

__host__ __device__ std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

unsigned grid(std::size_t n) {
  int device = 0, sms = 1;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  const std::size_t full = static_cast<std::size_t>(sms) * 16;
  const std::size_t need = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(need < full ? (need > 0 ? need : 1) : full);
}

__global__ void fill_keys_kernel(std::uint64_t* keys, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n; i += std::size_t{gridDim.x} * blockDim.x) {
    keys[i] = splitmix64(seed + i);
  }
}

__global__ void random_lines_kernel(const uint4* lines, std::uint64_t num_lines, std::size_t reads, unsigned* sink) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < reads; i += std::size_t{gridDim.x} * blockDim.x) {
    const std::uint64_t line = ((splitmix64(i) >> 32) * num_lines) >> 32;  // as block_index picks blocks
    const uint4* p = lines + 4 * line;
    const uint4 a = __ldg(p), b = __ldg(p + 1), c = __ldg(p + 2), d = __ldg(p + 3);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;  // keeps the loads alive
}

// Four 16-byte loads in flight per thread per step: enough bytes in flight
// to reach copy bandwidth.
__global__ void stream_kernel(const uint4* v, std::size_t n, unsigned* sink) {
  unsigned acc = 0;
  const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
  std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = __ldcs(v + i), b = __ldcs(v + i + stride), c = __ldcs(v + i + 2 * stride),
                d = __ldcs(v + i + 3 * stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w ^ c.x ^ c.y ^ c.z ^ c.w ^ d.x ^ d.y ^ d.z ^ d.w;
  }
  for (; i < n; i += stride) {
    const uint4 a = __ldcs(v + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  if (acc == 0x9E3779B9u) *sink = acc;
}

}  // namespace

void fill_keys(std::uint64_t* keys, std::size_t n, std::uint64_t seed, cudaStream_t s) {
  fill_keys_kernel<<<grid(n), kThreads, 0, s>>>(keys, n, seed);
}

void probe_random_lines(const void* buffer, std::size_t bytes, std::size_t reads, unsigned* sink, cudaStream_t s) {
  random_lines_kernel<<<grid(reads), kThreads, 0, s>>>(static_cast<const uint4*>(buffer), bytes / 64, reads, sink);
}

void probe_stream(const std::uint64_t* keys, std::size_t n, unsigned* sink, cudaStream_t s) {
  // n u64 = n / 2 uint4 (an odd last key is left out: 8 bytes in 8n).
  stream_kernel<<<grid(n / 2), kThreads, 0, s>>>(reinterpret_cast<const uint4*>(keys), n / 2, sink);
}

}  // namespace probkit::bench
