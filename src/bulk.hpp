// Internal: the CPU bulk driver. Splits a key batch over worker threads, hashes
// each worker's keys chunk by chunk into an L1-resident buffer, and hands each
// chunk of hashes to the structure's kernel.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <thread>
#include <vector>

#include "probkit/detail/kernels.hpp"

namespace probkit::detail {

inline constexpr std::size_t kHashChunk = 1024;  // 8 KiB of hashes

// fn(unsigned worker, std::size_t first_key, const std::uint64_t* hashes, std::size_t count)
template <class Fn>
void for_each_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec,
                         unsigned workers, Fn&& fn) {
  auto run = [&](unsigned worker, std::size_t lo, std::size_t hi) {
    alignas(64) std::uint64_t buf[kHashChunk];
    for (std::size_t s = lo; s < hi; s += kHashChunk) {
      const std::size_t c = std::min(kHashChunk, hi - s);
      const std::uint64_t* h = buf;
      if (keys.kind == KeyKind::Prehashed) {
        h = static_cast<const std::uint64_t*>(keys.keys) + s;
      } else {
        kernels.hash(keys, s, c, spec, buf);
      }
      fn(worker, s, h, c);
    }
  };
  if (workers <= 1 || keys.n < 2) {
    run(0, 0, keys.n);
    return;
  }
  std::vector<std::jthread> pool;
  pool.reserve(workers - 1);
  const std::size_t per = (keys.n + workers - 1) / workers;
  for (unsigned w = 1; w < workers; ++w) {
    const std::size_t lo = std::min(keys.n, w * per);
    const std::size_t hi = std::min(keys.n, lo + per);
    pool.emplace_back(run, w, lo, hi);
  }
  run(0, 0, std::min(keys.n, per));
}

}  // namespace probkit::detail
