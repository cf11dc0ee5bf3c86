// Speed-of-light probes (DESIGN.md §7): what the memory system allows for a
// buffer of a given size, measured in the same process as the benchmark that
// quotes it, so a structure's throughput can be read as a fraction of it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace probkit::bench {

// A rate per wall-clock second and per CPU second of each thread (count x
// threads / process CPU time): on a machine shared with other work the
// second is what the code would do with the cores to itself.
struct Rate {
  double per_s = 0;
  double per_cpu_s = 0;
};

// Reads one byte of every 4 KiB page of [data, data + bytes), so that pages
// the host of a virtual machine reclaimed are back before anything is timed.
std::uint64_t touch_pages(const void* data, std::size_t bytes);

// CPU seconds used by this process so far (all threads).
double process_cpu_seconds();

// Independent random 64-byte reads per second over a buffer of `bytes`
// bytes, by `threads` threads at once (summed): line addresses are computed
// in batches and prefetched ahead, so many misses are in flight, as a
// blocked Bloom filter query wants: the best of a direct schedule and
// prefetches 64, 128 and 256 lines ahead. Median of `repetitions` timed runs.
Rate random_line_reads_per_s(std::size_t bytes, unsigned threads, int repetitions = 3);

// Independent random 64-byte read-modify-writes per second over a buffer of
// `bytes` bytes, by `threads` threads each updating lines of its own slice
// (summed): each update ORs a value into a whole line, in one 64-byte vector
// where the CPU has one, the least work a blocked Bloom filter add does per
// key. The best of a direct schedule and prefetches (for write) 64, 128 and
// 256 lines ahead; median of `repetitions` timed runs.
Rate random_line_updates_per_s(std::size_t bytes, unsigned threads, int repetitions = 3);

// Sequential read bandwidth in bytes per second over a buffer of `bytes`
// bytes, by `threads` threads each reading its own slice (summed).
Rate sequential_read_bytes_per_s(std::size_t bytes, unsigned threads, int repetitions = 3);

// The clock of the core running this thread, in Hz: the time of a chain of
// dependent 64-bit multiplies, 3 cycles each on every x86-64 core since Intel
// Nehalem and AMD Zen. The report turns rates into core cycles per key with
// it, which carry from one clock to another where rates do not. Best of
// `repetitions` runs of about 20 ms; 0 where the latency is not known (not
// x86-64).
double core_clock_hz(int repetitions = 5);

// The measurement remembered under `key`, taken again by `measure` when there
// is none or it is older than a few seconds: Google Benchmark calls a
// benchmark several times (iteration estimate, each repetition), and a
// yardstick measured within seconds of the timed loop sees the same machine
// load. The probes below and hashing alone (bench_common.hpp) go through it.
Rate recent(const std::string& key, const std::function<Rate()>& measure);

// The probe buffers are kept between calls (one allocation per size), so a
// benchmark can afford to re-measure its probe right before it runs.
// These return a measurement (median of 3) no older than a few seconds,
// taking a new one when needed (recent()): what each benchmark quotes.
Rate recent_random_line_reads_per_s(std::size_t bytes, unsigned threads);
Rate recent_random_line_updates_per_s(std::size_t bytes, unsigned threads);
Rate recent_sequential_read_bytes_per_s(std::size_t bytes, unsigned threads);

}  // namespace probkit::bench
