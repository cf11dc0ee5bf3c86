// Device-side key hashing: the layout functions, one key per call, for each
// key kind (DESIGN.md §2). Shared by the Bloom and HLL kernels.
#pragma once
#include <cstdint>
#include <type_traits>

#include "launch.hpp"
#include "probkit/layout/hash.hpp"

namespace probkit::detail::cuda {

template <KeyKind K>
using KindTag = std::integral_constant<KeyKind, K>;

template <KeyKind K>
__device__ __forceinline__ std::uint64_t key_hash(const DeviceKeys& keys, std::size_t i, HashSpec spec) {
  if constexpr (K == KeyKind::U32) {
    return layout::hash_u32(spec, static_cast<const std::uint32_t*>(keys.keys)[i]);
  } else if constexpr (K == KeyKind::U64) {
    return layout::hash_u64(spec, static_cast<const std::uint64_t*>(keys.keys)[i]);
  } else if constexpr (K == KeyKind::Prehashed) {
    return static_cast<const std::uint64_t*>(keys.keys)[i];
  } else {
    using Offset = std::conditional_t<K == KeyKind::Offsets32, std::int32_t, std::int64_t>;
    const auto* off = static_cast<const Offset*>(keys.keys);
    const auto lo = static_cast<std::size_t>(off[i]);
    const auto hi = static_cast<std::size_t>(off[i + 1]);
    return layout::hash_bytes(spec, keys.data + lo, hi - lo);
  }
}

// Calls fn(KindTag<K>{}) for the batch's kind: one kernel instantiation per
// kind, so that the fixed-width kernels carry no string code.
template <class Fn>
cudaError_t with_kind(KeyKind kind, Fn&& fn) {
  switch (kind) {
    case KeyKind::U32: return fn(KindTag<KeyKind::U32>{});
    case KeyKind::U64: return fn(KindTag<KeyKind::U64>{});
    case KeyKind::Prehashed: return fn(KindTag<KeyKind::Prehashed>{});
    case KeyKind::Offsets32: return fn(KindTag<KeyKind::Offsets32>{});
    case KeyKind::Offsets64: return fn(KindTag<KeyKind::Offsets64>{});
    case KeyKind::Views: break;
  }
  return cudaErrorInvalidValue;
}

// Grid-stride loop bounds as size_t (key counts exceed 2^32).
__device__ __forceinline__ std::size_t global_thread() {
  return static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::size_t grid_threads() {
  return static_cast<std::size_t>(gridDim.x) * blockDim.x;
}

// Calls fn(i, hash of key i) for this thread's keys of a grid-stride loop,
// hashing kBatch keys before the first call so that their loads are in flight
// together: a streaming kernel needs many bytes in flight per thread.
// Strings use kBatch = 1 (their hash is a loop over bytes, not worth
// replicating).
template <KeyKind K, int kBatch, class Fn>
__device__ __forceinline__ void for_each_key_hash(const DeviceKeys& keys, HashSpec spec, Fn&& fn) {
  constexpr int kB = (K == KeyKind::Offsets32 || K == KeyKind::Offsets64) ? 1 : kBatch;
  const std::size_t stride = grid_threads();
  std::size_t i = global_thread();
  if constexpr (kB > 1) {
    for (; i + (kB - 1) * stride < keys.n; i += kB * stride) {
      std::uint64_t h[kB];
#pragma unroll
      for (int j = 0; j < kB; ++j) h[j] = key_hash<K>(keys, i + j * stride, spec);
#pragma unroll
      for (int j = 0; j < kB; ++j) fn(i + j * stride, h[j]);
    }
  }
  for (; i < keys.n; i += stride) fn(i, key_hash<K>(keys, i, spec));
}

}  // namespace probkit::detail::cuda
