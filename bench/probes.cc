#include "probes.hpp"

#include <sys/mman.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace probkit::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kLine = 64;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Long enough to average over scheduler noise, short enough to run per size.
constexpr auto kProbeTime = std::chrono::milliseconds(40);

// A buffer allocated the way probkit's Storage allocates a filter (64-byte or
// huge-page aligned, THP asked for from 2 MiB on), with every page touched.
struct Buffer {
  explicit Buffer(std::size_t bytes) : size(std::max(bytes, kLine) / kLine * kLine) {
    const std::size_t align = size >= kHugePage ? kHugePage : kLine;
    const std::size_t rounded = (size + align - 1) / align * align;
    ptr = static_cast<std::uint8_t*>(std::aligned_alloc(align, rounded));
    if (ptr == nullptr) throw std::bad_alloc();
    if (size >= kHugePage) (void)madvise(ptr, rounded, MADV_HUGEPAGE);
    for (std::size_t i = 0; i < size; i += 8) {
      const std::uint64_t v = i * 0x9E3779B97F4A7C15ULL;
      std::memcpy(ptr + i, &v, 8);
    }
  }
  ~Buffer() { std::free(ptr); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  std::uint8_t* ptr = nullptr;
  std::size_t size = 0;
};

}  // namespace

std::uint64_t touch_pages(const void* data, std::size_t bytes) {
  // One read per 4 KiB page. On a virtual machine the host may have taken
  // back the pages of a buffer left idle for a while (measured here: random
  // reads at 0.5 M/s instead of 50 M/s for seconds after a large allocation
  // elsewhere); reading every page first brings them back before timing.
  const auto* p = static_cast<const volatile std::uint8_t*>(data);
  std::uint64_t acc = 0;
  for (std::size_t i = 0; i < bytes; i += 4096) acc += p[i];
  return acc;
}

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double core_clock_hz(int repetitions) {
#if defined(__x86_64__)
  constexpr std::uint64_t kSteps = 1 << 20;  // x 8 multiplies x 3 cycles: ~50 M cycles
  double best = 0;
  for (int r = 0; r < repetitions; ++r) {
    std::uint64_t x = 3;
    const auto t0 = Clock::now();
    for (std::uint64_t i = 0; i < kSteps; ++i) {
      // Each imul waits for the one before: the loop runs at their latency.
      asm volatile(
          "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0\n\t"
          "imul %0, %0\n\timul %0, %0\n\timul %0, %0\n\timul %0, %0"
          : "+r"(x));
    }
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    best = std::max(best, 3.0 * 8 * static_cast<double>(kSteps) / s);
  }
  return best;
#else
  (void)repetitions;
  return 0;
#endif
}

namespace {

inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ULL;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBULL;
  x ^= x >> 31;
  return x;
}

inline std::uint64_t mulhi(std::uint64_t a, std::uint64_t b) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(a) * b) >> 64);
}

// The i-th line of `lines` for the direct (cache-resident) schedules: a
// multiplicative scramble of a counter. One multiply per address keeps the
// probes' own arithmetic from being the limit there (with mix64 the 256 KiB
// read probe measured 670-960 M lines/s against 1,490-1,550). From DRAM its
// Weyl-sequence stride is slow: see prefetched_lines_until.
inline std::uint64_t scrambled_line(std::uint64_t i, std::uint64_t lines) {
  return mulhi(i * 0x9E3779B97F4A7C15ULL, lines);
}

// The schedule that wins on cache-resident buffers: each address computed
// and loaded in one loop, four independent sums, nothing stored in between.
std::uint64_t direct_reads_until(const Buffer& buf, std::uint64_t seed, Clock::time_point deadline,
                                 std::uint64_t* sink) {
  const std::uint64_t lines = buf.size / kLine;
  std::uint64_t state = seed, a0 = 0, a1 = 0, a2 = 0, a3 = 0, reads = 0;
  auto at = [&](std::uint64_t i) {
    return *reinterpret_cast<const std::uint64_t*>(buf.ptr + scrambled_line(i, lines) * kLine);
  };
  while (Clock::now() < deadline) {
    for (int j = 0; j < 4096; ++j, state += 4) {
      a0 += at(state);
      a1 += at(state + 1);
      a2 += at(state + 2);
      a3 += at(state + 3);
    }
    reads += 4 * 4096;
  }
  *sink += a0 ^ a1 ^ a2 ^ a3;
  return reads;
}

// The schedules the random-line probes try, taking the best: 0 is the
// direct one (no prefetch), the others the prefetched one that many lines
// ahead. The kernels prefetch up to 96 keys ahead (kBloomPrefetchKeysAhead),
// and a probe that only looked 64 ahead read fewer lines than they did: on
// the Zen 5 guest, 1 GiB, one thread, reads 235 M lines/s at 64 ahead,
// 278-282 at 128, 263-272 at 256 (updates 229-234, 279-280, 256-264), with
// contains and add at 1.09 and 1.08 of the 64-ahead probe. The last three
// prefetch each line in two levels as the kernels do from DRAM: into L2
// `ahead` lines before its visit, then into L1 `l1` lines before it
// (kernels.hpp: bloom_l1_prefetch_keys_ahead); where the kernels had come to
// do so, the one-level probe no longer bounded them. The last goes into L1
// 16 lines ahead, as the kernels' second prefetch does since it moved there
// from 32 (the Zen 4 guest's 1 GiB reads, one thread: 128 and 16 ahead 203.8
// M lines/s, 128 and 32 199.5, 256 and 16 196.0; 32 MiB 231.5, 236.2, 226.4).
struct Schedule {
  std::size_t ahead;   // 0: the direct schedule
  std::size_t l1 = 0;  // 0: one level, into L1 `ahead` lines before
};
constexpr Schedule kSchedules[] = {{0}, {64}, {128}, {256}, {128, 32}, {256, 32}, {128, 16}};
constexpr std::size_t kMaxAhead = 256;

// The prefetched schedule of both random-line probes: line indices in
// [0, lines) from a full 64-bit mix of a counter, each computed `ahead`
// visits before its own (a power of two up to kMaxAhead), and
// visit(line, line_ahead, line_soon, j) runs for each, where line_ahead is
// the line `ahead` places later and line_soon the one `soon` places later
// (soon < ahead), to prefetch. Returns the number of lines visited.
// Always inlined: the update probe's clones for each target need it compiled
// for theirs.
//
// Not scrambled_line: its lines form a Weyl sequence, consecutive ones a
// nearly constant stride apart (0.618 of the buffer), and that pattern ran
// 1.3-1.5x slower than random lines from DRAM (Zen 5 guest, 1 GiB, one
// thread, TSC cycles per line, medians of six passes over 2^22 lines: reads
// 20.3-23.4 against 13.6-15.5, updates 22.5-27.9 against 14.6-15.3), so the
// probe understated the rate of the random lines a filter's hashes pick. The
// mix costs two multiplies per line; computed in the visiting loop, beside
// the misses, rather than in a batch before them (where only the previous
// batch's last `ahead` misses were in flight), the read probe measured 185-193
// M lines/s against 156-168 (same guest, 1 GiB, one thread, three runs).
template <class Visit>
[[gnu::always_inline]] inline std::uint64_t prefetched_lines_until(std::uint64_t lines, std::size_t ahead,
                                                                   std::size_t soon, std::uint64_t seed,
                                                                   Clock::time_point deadline, Visit&& visit) {
  constexpr std::size_t kBatch = 1024;  // visits between deadline checks
  static_assert(kBatch % kMaxAhead == 0, "the ring's slots line up across batches");
  const std::size_t slot = ahead - 1;  // j & slot = j % ahead
  std::uint64_t ring[kMaxAhead];       // ring[j % ahead]: the line of visit j, computed at visit j - ahead
  std::uint64_t state = seed, visited = 0;
  auto next = [&] { return mulhi(mix64(state++), lines); };
  for (std::size_t j = 0; j < ahead; ++j) ring[j] = next();
  while (Clock::now() < deadline) {
    for (int rounds = 0; rounds < 16; ++rounds) {
      for (std::size_t j = 0; j < kBatch; ++j) {
        const std::uint64_t later = next();
        const std::uint64_t at = ring[j & slot];
        ring[j & slot] = later;
        visit(at, later, ring[(j + soon) & slot], j);
      }
      visited += kBatch;
    }
  }
  return visited;
}

// One thread's random-line loop. With `ahead` lines: each line is read (one
// load brings the whole line to L1) while the line `ahead` places later is
// computed and prefetched (prefetched_lines_until), in one level or two;
// this wins from DRAM. With 0: the direct schedule above, which wins from
// cache.
std::uint64_t random_reads_until(const Buffer& buf, Schedule s, std::uint64_t seed, Clock::time_point deadline,
                                 std::uint64_t* sink) {
  if (s.ahead == 0) return direct_reads_until(buf, seed, deadline, sink);
  std::uint64_t acc = 0;
  auto read = [&](std::uint64_t at) { acc += *reinterpret_cast<const std::uint64_t*>(buf.ptr + at * kLine); };
  const std::uint64_t lines = buf.size / kLine;
  const std::uint64_t reads =
      s.l1 == 0 ? prefetched_lines_until(lines, s.ahead, 0, seed, deadline,
                                         [&](std::uint64_t at, std::uint64_t later, std::uint64_t, std::size_t) {
                                           __builtin_prefetch(buf.ptr + later * kLine);
                                           read(at);
                                         })
                : prefetched_lines_until(lines, s.ahead, s.l1, seed, deadline,
                                         [&](std::uint64_t at, std::uint64_t later, std::uint64_t soon, std::size_t) {
                                           __builtin_prefetch(buf.ptr + later * kLine, 0, 2);  // into L2
                                           __builtin_prefetch(buf.ptr + soon * kLine);
                                           read(at);
                                         });
  *sink += acc;
  return reads;
}

// A whole 64-byte line as one GCC vector: one store on AVX-512, two on AVX2.
using LineVec = std::uint64_t __attribute__((vector_size(64)));

#if defined(__x86_64__)
// The update probe must write a line the widest way the CPU allows (one
// 64-byte store costs less than eight 8-byte ones); the bench is built for the
// baseline target, so GCC compiles the loop per target and picks at load time.
#define PROBKIT_WIDEST_STORES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define PROBKIT_WIDEST_STORES
#endif

// GCC's __builtin_prefetch(p, 1) emits PREFETCHW only for targets that name
// PRFCHW, which the clones' do not; every x86-64 CPU that runs this bench has
// it (older ones execute it as a no-op).
inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1);
#endif
}

// One thread's random-line updates over lines [first, first + lines) of the
// buffer, in the schedules of the read probe, prefetching for write. Each
// update ORs into every word of its line a bit that moves from one update to
// the next, so a line's first updates change it; once a line has collected
// all 64 bit positions (after a few hundred updates, which a cache-sized
// buffer reaches within its first run) its stores write back what it already
// holds. So do a Bloom add's once its bits are set (the add benchmarks cycle
// through one pool of keys: after the first pass every bit they set is set);
// the probe times the read-modify-write of a whole line either way, not a
// change of its contents.
PROBKIT_WIDEST_STORES
std::uint64_t random_updates_until(std::uint8_t* base, std::uint64_t first, std::uint64_t lines, Schedule s,
                                   std::uint64_t seed, Clock::time_point deadline) {
  auto* line = reinterpret_cast<LineVec*>(base) + first;
  auto update = [&](std::uint64_t at, std::uint64_t i) { line[at] |= LineVec{} + (std::uint64_t{1} << (i & 63)); };
  if (s.ahead != 0 && s.l1 == 0) {
    return prefetched_lines_until(lines, s.ahead, 0, seed, deadline,
                                  [&](std::uint64_t at, std::uint64_t later, std::uint64_t, std::size_t j) {
                                    prefetch_for_write(line + later);
                                    update(at, j);
                                  });
  }
  if (s.ahead != 0) {
    return prefetched_lines_until(lines, s.ahead, s.l1, seed, deadline,
                                  [&](std::uint64_t at, std::uint64_t later, std::uint64_t soon, std::size_t j) {
                                    __builtin_prefetch(line + later, 0, 2);  // into L2
                                    prefetch_for_write(line + soon);
                                    update(at, j);
                                  });
  }
  std::uint64_t state = seed, updates = 0;
  while (Clock::now() < deadline) {
    for (std::uint64_t j = 0; j < 4 * 4096; ++j) update(scrambled_line(state++, lines), j);
    updates += 4 * 4096;
  }
  return updates;
}

// One thread's sequential pass(es) over [lo, hi), four independent sums.
std::uint64_t sequential_bytes_until(const Buffer& buf, std::size_t lo, std::size_t hi,
                                     Clock::time_point deadline, std::uint64_t* sink) {
  const auto* w = reinterpret_cast<const std::uint64_t*>(buf.ptr + lo);
  const std::size_t n = (hi - lo) / 8 / 8 * 8;
  std::uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0, bytes = 0;
  do {
    for (std::size_t i = 0; i < n; i += 8) {
      a0 += w[i] + w[i + 4];
      a1 += w[i + 1] + w[i + 5];
      a2 += w[i + 2] + w[i + 6];
      a3 += w[i + 3] + w[i + 7];
    }
    bytes += n * 8;
  } while (Clock::now() < deadline);
  *sink += a0 ^ a1 ^ a2 ^ a3;
  return bytes;
}

// Runs body(thread index, deadline, sink) on `threads` threads started
// together; returns the summed count per wall-clock second and per CPU
// second of each thread.
template <class Body>
Rate run_threads(unsigned threads, Body body) {
  threads = std::max(1u, threads);
  std::vector<std::uint64_t> counts(threads, 0), sinks(threads, 0);
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  Clock::time_point start, deadline;
  auto work = [&](unsigned t) {
    ready.fetch_add(1);
    while (!go.load(std::memory_order_acquire)) {
    }
    counts[t] = body(t, deadline, &sinks[t]);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  while (ready.load() != threads - 1) std::this_thread::yield();
  const double cpu0 = process_cpu_seconds();
  start = Clock::now();
  deadline = start + kProbeTime;
  go.store(true, std::memory_order_release);
  counts[0] = body(0, deadline, &sinks[0]);
  for (auto& th : pool) th.join();
  const double secs = std::chrono::duration<double>(Clock::now() - start).count();
  const double cpu = process_cpu_seconds() - cpu0;
  std::uint64_t total = 0, sink = 0;
  for (unsigned t = 0; t < threads; ++t) {
    total += counts[t];
    sink ^= sinks[t];
  }
  static std::atomic<std::uint64_t> g_sink;  // keeps the reads from being optimised away
  g_sink.fetch_xor(sink, std::memory_order_relaxed);
  return {total / secs, total * threads / cpu};
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Rate median(const std::vector<Rate>& v) {
  std::vector<double> wall, cpu;
  for (const Rate& r : v) wall.push_back(r.per_s), cpu.push_back(r.per_cpu_s);
  return {median(wall), median(cpu)};
}

// The probe buffers, kept between calls so that each benchmark can re-measure
// its probe right before it runs (the ratio then sees the same machine load)
// without re-allocating and touching a 1 GiB buffer each time. Buffers of
// other sizes of 256 MiB and more are dropped first.
Buffer& buffer_of(std::size_t bytes) {
  static std::map<std::size_t, std::unique_ptr<Buffer>> buffers;
  static std::mutex m;
  std::lock_guard lock(m);
  auto it = buffers.find(bytes);
  if (it != buffers.end()) return *it->second;
  for (auto i = buffers.begin(); i != buffers.end();) {
    i = i->first >= (std::size_t{256} << 20) ? buffers.erase(i) : std::next(i);
  }
  return *buffers.emplace(bytes, std::make_unique<Buffer>(bytes)).first->second;
}

}  // namespace

Rate random_line_reads_per_s(std::size_t bytes, unsigned threads, int repetitions) {
  const Buffer& buf = buffer_of(bytes);
  touch_pages(buf.ptr, buf.size);
  std::vector<Rate> rates;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    // The limit is the best of the schedules.
    Rate best;
    for (const Schedule& s : kSchedules) {
      const Rate x = run_threads(threads, [&](unsigned t, Clock::time_point deadline, std::uint64_t* sink) {
        return random_reads_until(buf, s, 0x1234567ULL * (t + 1) + 0x100000000ULL * r, deadline, sink);
      });
      best = {std::max(best.per_s, x.per_s), std::max(best.per_cpu_s, x.per_cpu_s)};
    }
    rates.push_back(best);
  }
  return median(rates);
}

Rate random_line_updates_per_s(std::size_t bytes, unsigned threads, int repetitions) {
  Buffer& buf = buffer_of(bytes);  // the read probes' buffer: they read whatever it holds
  touch_pages(buf.ptr, buf.size);
  threads = std::max(1u, threads);
  const std::uint64_t slice = buf.size / kLine / threads;  // lines per thread
  std::vector<Rate> rates;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    Rate best;
    for (const Schedule& s : kSchedules) {
      const Rate x = run_threads(threads, [&](unsigned t, Clock::time_point deadline, std::uint64_t*) {
        const std::uint64_t seed = 0x1234567ULL * (t + 1) + 0x100000000ULL * r;
        return random_updates_until(buf.ptr, t * slice, slice, s, seed, deadline);
      });
      best = {std::max(best.per_s, x.per_s), std::max(best.per_cpu_s, x.per_cpu_s)};
    }
    rates.push_back(best);
  }
  return median(rates);
}

Rate sequential_read_bytes_per_s(std::size_t bytes, unsigned threads, int repetitions) {
  const Buffer& buf = buffer_of(bytes);
  touch_pages(buf.ptr, buf.size);
  threads = std::max(1u, threads);
  const std::size_t slice = buf.size / threads / kLine * kLine;
  std::vector<Rate> rates;
  for (int r = 0; r < std::max(1, repetitions); ++r) {
    rates.push_back(run_threads(threads, [&](unsigned t, Clock::time_point deadline, std::uint64_t* sink) {
      return sequential_bytes_until(buf, t * slice, (t + 1) * slice, deadline, sink);
    }));
  }
  return median(rates);
}

namespace {
// How old a remembered measurement may be before recent() takes it again.
constexpr auto kFresh = std::chrono::seconds(3);

std::string probe_key(const char* what, std::size_t bytes, unsigned threads) {
  return std::string(what) + "/" + std::to_string(bytes) + "/" + std::to_string(threads);
}
}  // namespace

Rate recent(const std::string& key, const std::function<Rate()>& measure) {
  struct Entry {
    Rate value;
    Clock::time_point at;
  };
  static std::map<std::string, Entry> cache;
  static std::mutex m;
  std::lock_guard lock(m);
  auto it = cache.find(key);
  if (it == cache.end() || Clock::now() - it->second.at > kFresh) {
    const Rate value = measure();
    it = cache.insert_or_assign(key, Entry{value, Clock::now()}).first;
  }
  return it->second.value;
}

Rate recent_random_line_reads_per_s(std::size_t bytes, unsigned threads) {
  return recent(probe_key("reads", bytes, threads), [&] { return random_line_reads_per_s(bytes, threads, 3); });
}

Rate recent_random_line_updates_per_s(std::size_t bytes, unsigned threads) {
  return recent(probe_key("updates", bytes, threads), [&] { return random_line_updates_per_s(bytes, threads, 3); });
}

Rate recent_sequential_read_bytes_per_s(std::size_t bytes, unsigned threads) {
  return recent(probe_key("sequential", bytes, threads),
                [&] { return sequential_read_bytes_per_s(bytes, threads, 3); });
}

}  // namespace probkit::bench
