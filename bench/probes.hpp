// Speed-of-light probes (DESIGN.md §7): what the memory system allows for a
// buffer of a given size, measured in the same process as the benchmark that
// quotes it, so a structure's throughput can be read as a fraction of it.
#pragma once
#include <cstddef>
#include <cstdint>

namespace probkit::bench {

// Independent random 64-byte reads per second over a buffer of `bytes`
// bytes, by `threads` threads at once (summed): line addresses are computed
// in batches and prefetched ahead, so many misses are in flight, as a
// blocked Bloom filter query wants. Median of `repetitions` timed runs.
double random_line_reads_per_s(std::size_t bytes, unsigned threads, int repetitions = 3);

// Sequential read bandwidth in bytes per second over a buffer of `bytes`
// bytes, by `threads` threads each reading its own slice (summed).
double sequential_read_bytes_per_s(std::size_t bytes, unsigned threads, int repetitions = 3);

// Both probes remember their results per (bytes, threads) for the life of
// the process: the benchmarks of one size share one measurement.
double cached_random_line_reads_per_s(std::size_t bytes, unsigned threads);
double cached_sequential_read_bytes_per_s(std::size_t bytes, unsigned threads);

}  // namespace probkit::bench
