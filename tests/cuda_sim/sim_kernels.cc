// The kernel launchers of cuda/launch.hpp for the simulator: each launch is
// queued on its stream and, when the stream runs, does what the kernel does
// by the scalar reference (the layout functions in a loop), after checking
// that every buffer it touches is simulated device memory. This checks the
// host-side orchestration in cuda/backend.cc, not the CUDA kernels.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cuda_runtime_api.h"
#include "launch.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "probkit/layout/hash.hpp"
#include "probkit/layout/hll.hpp"

namespace probkit::detail::cuda {
namespace {

std::size_t key_bytes(const DeviceKeys& k) {
  switch (k.kind) {
    case KeyKind::U32: return 4 * k.n;
    case KeyKind::Offsets32: return 4 * (k.n + 1);
    case KeyKind::Offsets64: return 8 * (k.n + 1);
    default: return 8 * k.n;
  }
}

// The hashes of a batch in device memory, as keys.cuh computes them.
std::vector<std::uint64_t> hashes_of(const DeviceKeys& k, HashSpec spec) {
  cuda_sim::require_device(k.keys, key_bytes(k), "keys");
  std::vector<std::uint64_t> h(k.n);
  for (std::size_t i = 0; i < k.n; ++i) {
    switch (k.kind) {
      case KeyKind::U32: h[i] = layout::hash_u32(spec, static_cast<const std::uint32_t*>(k.keys)[i]); break;
      case KeyKind::U64: h[i] = layout::hash_u64(spec, static_cast<const std::uint64_t*>(k.keys)[i]); break;
      case KeyKind::Prehashed: h[i] = static_cast<const std::uint64_t*>(k.keys)[i]; break;
      case KeyKind::Offsets32:
      case KeyKind::Offsets64: {
        const bool wide = k.kind == KeyKind::Offsets64;
        const auto lo = wide ? static_cast<std::size_t>(static_cast<const std::int64_t*>(k.keys)[i])
                             : static_cast<std::size_t>(static_cast<const std::int32_t*>(k.keys)[i]);
        const auto hi = wide ? static_cast<std::size_t>(static_cast<const std::int64_t*>(k.keys)[i + 1])
                             : static_cast<std::size_t>(static_cast<const std::int32_t*>(k.keys)[i + 1]);
        cuda_sim::require_device(k.data + lo, hi - lo, "string bytes");
        h[i] = layout::hash_bytes(spec, k.data + lo, hi - lo);
        break;
      }
      case KeyKind::Views: std::abort();  // never reaches a kernel
    }
  }
  return h;
}

std::size_t filter_bytes(const BloomRef& f) { return f.num_blocks * layout::block_bytes(f.layout); }

}  // namespace

unsigned grid_for(std::size_t n, unsigned threads, int sm_count) {
  const std::size_t need = (n + threads - 1) / threads;
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(need, std::size_t(sm_count) * 16)));
}

cudaError_t launch_bloom_add(const BloomRef& f, const DeviceKeys& keys, HashSpec spec, int, cudaStream_t s) {
  if (keys.n == 0) return cudaSuccess;
  cuda_sim::enqueue(s, [=] {
    cuda_sim::require_device(f.words, filter_bytes(f), "filter");
    const auto h = hashes_of(keys, spec);
    scalar_kernels().bloom_add(f, h.data(), h.size(), {});
  });
  return cudaSuccess;
}

cudaError_t launch_bloom_contains(const BloomRef& f, const DeviceKeys& keys, HashSpec spec, std::uint8_t* out,
                                  unsigned long long* count, int, cudaStream_t s) {
  if (keys.n == 0) return cudaSuccess;
  cuda_sim::enqueue(s, [=] {
    cuda_sim::require_device(f.words, filter_bytes(f), "filter");
    if (out != nullptr) cuda_sim::require_device(out, keys.n, "out");
    if (count != nullptr) cuda_sim::require_device(count, sizeof *count, "count");
    const auto h = hashes_of(keys, spec);
    const std::uint64_t hits = scalar_kernels().bloom_contains(f, h.data(), h.size(), {}, out);
    if (count != nullptr) *count += hits;
  });
  return cudaSuccess;
}

cudaError_t launch_bloom_combine(std::uint32_t* dst, const std::uint32_t* src, std::size_t words, bool intersect, int,
                                 cudaStream_t s) {
  cuda_sim::enqueue(s, [=] {
    cuda_sim::require_device(dst, 4 * words, "dst");
    cuda_sim::require_device(src, 4 * words, "src");
    for (std::size_t i = 0; i < words; ++i) dst[i] = intersect ? dst[i] & src[i] : dst[i] | src[i];
  });
  return cudaSuccess;
}

cudaError_t launch_hll_add(std::uint8_t* registers, std::uint32_t p, const DeviceKeys& keys, HashSpec spec, int,
                           std::size_t, cudaStream_t s) {
  if (keys.n == 0) return cudaSuccess;
  cuda_sim::enqueue(s, [=] {
    cuda_sim::require_device(registers, std::size_t{1} << p, "registers");
    const auto h = hashes_of(keys, spec);
    scalar_kernels().hll_add(registers, p, h.data(), h.size(), 0);
  });
  return cudaSuccess;
}

cudaError_t launch_hll_max(std::uint8_t* dst, const std::uint8_t* src, std::size_t n, int, cudaStream_t s) {
  cuda_sim::enqueue(s, [=] {
    cuda_sim::require_device(dst, n, "dst");
    cuda_sim::require_device(src, n, "src");
    for (std::size_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]);
  });
  return cudaSuccess;
}

cudaError_t launch_hll_histogram(const std::uint8_t* registers, std::uint32_t p, std::uint32_t* hist, int,
                                 cudaStream_t s) {
  cuda_sim::enqueue(s, [=] {
    const std::size_t m = std::size_t{1} << p;
    cuda_sim::require_device(registers, m, "registers");
    cuda_sim::require_device(hist, 4 * (66 - p), "histogram");
    for (std::size_t j = 0; j < m; ++j) ++hist[std::min<std::uint32_t>(registers[j], 65 - p)];
  });
  return cudaSuccess;
}

cudaError_t launch_validate_offsets(const DeviceKeys& keys, std::size_t data_size, unsigned long long* first_bad, int,
                                    cudaStream_t s) {
  if (keys.kind != KeyKind::Offsets32 && keys.kind != KeyKind::Offsets64) return cudaErrorInvalidValue;
  cuda_sim::enqueue(s, [=] {
    cuda_sim::require_device(keys.keys, key_bytes(keys), "offsets");
    cuda_sim::require_device(first_bad, sizeof *first_bad, "first_bad");
    const bool wide = keys.kind == KeyKind::Offsets64;
    auto at = [&](std::size_t i) {
      return wide ? static_cast<const std::int64_t*>(keys.keys)[i]
                  : static_cast<std::int64_t>(static_cast<const std::int32_t*>(keys.keys)[i]);
    };
    for (std::size_t i = 0; i <= keys.n; ++i) {
      const std::int64_t o = at(i);
      if (o < 0 || static_cast<std::uint64_t>(o) > data_size || (i > 0 && o < at(i - 1))) {
        *first_bad = std::min<unsigned long long>(*first_bad, i);
      }
    }
  });
  return cudaSuccess;
}

}  // namespace probkit::detail::cuda
