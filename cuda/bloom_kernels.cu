// Blocked Bloom filter kernels (DESIGN.md §3): faster schedules of the
// layout functions in include/probkit/layout/bloom.hpp, one key per thread in
// a grid-stride loop.
#include <cstdint>

#include "block_words.hpp"
#include "keys.cuh"
#include "launch.hpp"
#include "probkit/layout/bloom.hpp"

namespace probkit::detail::cuda {
namespace {

constexpr unsigned kThreads = 256;
// add has no dependent loads (its atomics are fire-and-forget): the key
// loads are its latency, so each thread keeps several in flight.
constexpr int kAddBatch = 4;

// add: the key's mask (cuda/block_words.hpp) is ORed into the block with one
// 64-bit atomicOr (a fire-and-forget RED) per 8-byte word that has bits to
// set. add is bound by the REDs, so it uses as few as it can: on one H200,
// 10^9 u64 keys, k = 8, 64-bit words made add 1.24x (cacheline512) and 2.0x
// (parquet_sbbf, whose 8 one-bit words pair up into 4) faster than 32-bit
// words. The 32-bit word w of a block is the low (w even) or high half of
// 64-bit word w / 2: the GPU is little-endian, like the byte format
// (DESIGN.md §3).
template <KeyKind K, BloomLayout L>
__global__ void __launch_bounds__(kThreads) bloom_add_kernel(BloomRef f, DeviceKeys keys, HashSpec spec) {
  for_each_key_hash<K, kAddBatch>(keys, spec, [&](std::size_t, std::uint64_t h) {
    const std::uint64_t b = layout::block_index(h, f.num_blocks);
    if constexpr (L == BloomLayout::Cacheline512) {
      std::uint64_t mask[layout::kCachelineWords / 2] = {};
      cacheline_mask64(h, f.k, mask);
      auto* block = reinterpret_cast<unsigned long long*>(f.words + b * layout::kCachelineWords);
#pragma unroll
      for (unsigned w = 0; w < layout::kCachelineWords / 2; ++w) {
        if (mask[w] != 0) atomicOr(block + w, static_cast<unsigned long long>(mask[w]));
      }
    } else {
      auto* block = reinterpret_cast<unsigned long long*>(f.words + b * layout::kSbbfWords);
#pragma unroll
      for (unsigned w = 0; w < layout::kSbbfWords / 2; ++w) {
        atomicOr(block + w, static_cast<unsigned long long>(sbbf_pair_bits(h, w)));
      }
    }
  });
}

// contains: the block arrives in 16-byte vector loads (cacheline512: four,
// the whole 64-byte line; parquet_sbbf: two, one 32-byte sector) and the
// probes are tested in registers. For cacheline512 this replaced a copy of
// the line in shared memory, whose stores and loads compete with the line
// loads for the same L1 path: on one H200 (10^9 u64 keys, k = 8) 1.8x faster
// on a 1 MiB filter, 1.5x on 32 MiB, 1.04x on 2 GiB.
template <KeyKind K, BloomLayout L>
__global__ void __launch_bounds__(kThreads)
    bloom_contains_kernel(BloomRef f, DeviceKeys keys, HashSpec spec, std::uint8_t* out, unsigned long long* count) {
  unsigned long long hits = 0;
  for (std::size_t i = global_thread(); i < keys.n; i += grid_threads()) {
    const std::uint64_t h = key_hash<K>(keys, i, spec);
    const std::uint64_t b = layout::block_index(h, f.num_blocks);
    bool hit = true;
    if constexpr (L == BloomLayout::Cacheline512) {
      const auto* line = reinterpret_cast<const uint4*>(f.words + b * layout::kCachelineWords);
      const uint4 v0 = __ldg(line), v1 = __ldg(line + 1), v2 = __ldg(line + 2), v3 = __ldg(line + 3);
      hit = line_contains(h, f.k, v0, v1, v2, v3);
    } else {
      const auto* sector = reinterpret_cast<const uint4*>(f.words + b * layout::kSbbfWords);
      const uint4 v0 = __ldg(sector), v1 = __ldg(sector + 1);
      const std::uint32_t w[layout::kSbbfWords] = {v0.x, v0.y, v0.z, v0.w, v1.x, v1.y, v1.z, v1.w};
#pragma unroll
      for (unsigned j = 0; j < layout::kSbbfWords; ++j) hit &= (w[j] & layout::sbbf_word_bit(h, j)) != 0;
    }
    if (out != nullptr) out[i] = hit ? 1 : 0;
    hits += hit ? 1 : 0;
  }
  if (count != nullptr) {
    // One atomic per warp: the per-thread sums are reduced by shuffles first.
    for (int d = 16; d > 0; d /= 2) hits += __shfl_down_sync(0xffffffffu, hits, d);
    if ((threadIdx.x & 31) == 0 && hits != 0) atomicAdd(count, hits);
  }
}

__global__ void bloom_combine_kernel(uint4* dst, const uint4* src, std::size_t n, bool intersect) {
  for (std::size_t i = global_thread(); i < n; i += grid_threads()) {
    uint4 a = dst[i];
    const uint4 b = src[i];
    if (intersect) {
      a.x &= b.x, a.y &= b.y, a.z &= b.z, a.w &= b.w;
    } else {
      a.x |= b.x, a.y |= b.y, a.z |= b.z, a.w |= b.w;
    }
    dst[i] = a;
  }
}

template <class Fn>
cudaError_t with_layout(BloomLayout l, Fn&& fn) {
  if (l == BloomLayout::ParquetSbbf) return fn(std::integral_constant<BloomLayout, BloomLayout::ParquetSbbf>{});
  return fn(std::integral_constant<BloomLayout, BloomLayout::Cacheline512>{});
}

}  // namespace

unsigned grid_for(std::size_t n, unsigned threads, int sm_count) {
  // 8 CTAs of 256 threads fill an SM's 2048 thread slots; twice that leaves
  // slack for CTAs that finish early.
  const std::size_t full = static_cast<std::size_t>(sm_count > 0 ? sm_count : 1) * 16;
  const std::size_t need = (n + threads - 1) / threads;
  return static_cast<unsigned>(need < full ? (need > 0 ? need : 1) : full);
}

cudaError_t launch_bloom_add(const BloomRef& f, const DeviceKeys& keys, HashSpec spec, int sm_count,
                             cudaStream_t s) {
  if (keys.n == 0) return cudaSuccess;
  const unsigned grid = grid_for(keys.n, kThreads, sm_count);
  return with_kind(keys.kind, [&](auto kind) {
    return with_layout(f.layout, [&](auto layout) {
      bloom_add_kernel<decltype(kind)::value, decltype(layout)::value><<<grid, kThreads, 0, s>>>(f, keys, spec);
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_bloom_contains(const BloomRef& f, const DeviceKeys& keys, HashSpec spec,
                                  std::uint8_t* out, unsigned long long* count, int sm_count,
                                  cudaStream_t s) {
  if (keys.n == 0) return cudaSuccess;
  const unsigned grid = grid_for(keys.n, kThreads, sm_count);
  return with_kind(keys.kind, [&](auto kind) {
    return with_layout(f.layout, [&](auto layout) {
      bloom_contains_kernel<decltype(kind)::value, decltype(layout)::value>
          <<<grid, kThreads, 0, s>>>(f, keys, spec, out, count);
      return cudaGetLastError();
    });
  });
}

cudaError_t launch_bloom_combine(std::uint32_t* dst, const std::uint32_t* src, std::size_t words,
                                 bool intersect, int sm_count, cudaStream_t s) {
  // Blocks are 32 or 64 bytes and cudaMalloc aligns to 256: whole uint4s.
  const std::size_t n = words / 4;
  if (n == 0) return cudaSuccess;
  bloom_combine_kernel<<<grid_for(n, kThreads, sm_count), kThreads, 0, s>>>(
      reinterpret_cast<uint4*>(dst), reinterpret_cast<const uint4*>(src), n, intersect);
  return cudaGetLastError();
}

}  // namespace probkit::detail::cuda
