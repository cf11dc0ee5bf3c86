// Speed-of-light probes for the GPU benchmarks, and a key generator.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace probkit::bench {

// keys[i] = splitmix64(seed + i): distinct, uniformly spread u64 keys.
void fill_keys(std::uint64_t* keys, std::size_t n, std::uint64_t seed, cudaStream_t s);

// `reads` independent 64-byte reads at random 64-byte-aligned places of a
// buffer of `bytes` bytes: the limit of a blocked-filter probe (one line per key).
void probe_random_lines(const void* buffer, std::size_t bytes, std::size_t reads, unsigned* sink,
                        cudaStream_t s);

// One streaming read of n u64 values: the limit of work that reads each key once.
void probe_stream(const std::uint64_t* keys, std::size_t n, unsigned* sink, cudaStream_t s);

}  // namespace probkit::bench
