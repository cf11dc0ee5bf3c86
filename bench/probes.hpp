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

// The probe buffers are kept between calls (one allocation per size), so a
// benchmark can afford to re-measure its probe right before it runs.
// These return a measurement (median of 3) no older than a few seconds,
// taking a new one when needed: what each benchmark quotes.
double recent_random_line_reads_per_s(std::size_t bytes, unsigned threads);
double recent_sequential_read_bytes_per_s(std::size_t bytes, unsigned threads);

}  // namespace probkit::bench
