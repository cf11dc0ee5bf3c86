// GPU benchmarks: Bloom add / contains on filters of 1 MiB, 32 MiB (L2-
// resident) and 2 GiB, and HLL add, each over N u64 keys in device memory
// (default 10^9; --keys=N for quick runs). Each benchmark times its speed-
// of-light probe in the same process on the same sizes and reports the
// ratio: Bloom against independent random 64-byte reads of a buffer of the
// filter's size, HLL against one streaming read of the key array. The
// *HostKeys benchmarks take the keys from host memory (pageable, or
// page-locked by cudaMallocHost) and compare with copying the same bytes
// from page-locked memory to the device: the bus is their limit.
// Without a usable GPU the program says so and exits 0.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>  // the typed cudaMalloc template

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "probes.hpp"
#include "probkit/probkit.hpp"

namespace {

using probkit::BloomFilter;
using probkit::BloomLayout;
using probkit::HyperLogLog;
using probkit::KeyMemory;
using probkit::Keys;

struct Data {
  std::size_t n = 0;
  std::uint64_t* keys = nullptr;  // device
  std::uint8_t* out = nullptr;    // device, n bytes
  unsigned* sink = nullptr;
  cudaStream_t stream = nullptr;
  Keys device_keys() const { return Keys(std::span<const std::uint64_t>(keys, n), KeyMemory::Device); }
};
Data g;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// Milliseconds of GPU time for the work fn() enqueues on g.stream.
template <class Fn>
double gpu_ms(Fn&& fn) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  check(cudaEventRecord(a, g.stream), "cudaEventRecord");
  fn();
  check(cudaEventRecord(b, g.stream), "cudaEventRecord");
  check(cudaEventSynchronize(b), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

void report(benchmark::State& st, double op_ms, double probe_ms, int iters, std::size_t keys = g.n) {
  const double n = static_cast<double>(keys);
  st.counters["Gkeys/s"] = n * iters / (op_ms / 1e3) / 1e9;
  st.counters["probe_G/s"] = n * iters / (probe_ms / 1e3) / 1e9;
  st.counters["ratio"] = probe_ms / op_ms;  // op throughput / probe throughput
}

BloomFilter device_filter(std::size_t bytes, BloomLayout layout) {
  BloomFilter f = BloomFilter::for_bytes(bytes, 8, layout);  // k = 8: parquet_sbbf's fixed k, 16 bits/key-ish for cacheline512
  f.to_device();
  return f;
}

void bm_bloom_add(benchmark::State& st, std::size_t bytes, BloomLayout layout) {
  BloomFilter f = device_filter(bytes, layout);
  const Keys keys = g.device_keys();
  double op = 0, probe = 0;
  int iters = 0;
  for (auto _ : st) {
    f.clear();
    const double ms = gpu_ms([&] { f.add_async(keys, g.stream); });
    probe += gpu_ms([&] { probkit::bench::probe_random_lines(f.data().data(), f.size_bytes(), g.n, g.sink, g.stream); });
    st.SetIterationTime(ms / 1e3);
    op += ms;
    ++iters;
  }
  report(st, op, probe, iters);
  st.counters["fill"] = f.fill_ratio();
}

void bm_bloom_contains(benchmark::State& st, std::size_t bytes, BloomLayout layout) {
  BloomFilter f = device_filter(bytes, layout);
  const Keys keys = g.device_keys();
  f.add(keys, g.stream);  // every query is then a hit: all k probes are tested
  double op = 0, probe = 0;
  int iters = 0;
  for (auto _ : st) {
    const double ms = gpu_ms([&] { f.contains_async(keys, std::span<std::uint8_t>(g.out, g.n), g.stream); });
    probe += gpu_ms([&] { probkit::bench::probe_random_lines(f.data().data(), f.size_bytes(), g.n, g.sink, g.stream); });
    st.SetIterationTime(ms / 1e3);
    op += ms;
    ++iters;
  }
  report(st, op, probe, iters);
}

void bm_bloom_count(benchmark::State& st, std::size_t bytes, BloomLayout layout) {
  BloomFilter f = device_filter(bytes, layout);
  const Keys keys = g.device_keys();
  f.add(keys, g.stream);
  std::uint64_t* hits = nullptr;
  check(cudaMalloc(&hits, sizeof *hits), "cudaMalloc");
  double op = 0, probe = 0;
  int iters = 0;
  for (auto _ : st) {
    const double ms = gpu_ms([&] { f.count_async(keys, hits, g.stream); });
    probe += gpu_ms([&] { probkit::bench::probe_random_lines(f.data().data(), f.size_bytes(), g.n, g.sink, g.stream); });
    st.SetIterationTime(ms / 1e3);
    op += ms;
    ++iters;
  }
  cudaFree(hits);
  report(st, op, probe, iters);
}

void bm_hll_add(benchmark::State& st, std::uint32_t p) {
  HyperLogLog h(p);
  h.to_device();
  const Keys keys = g.device_keys();
  double op = 0, probe = 0;
  int iters = 0;
  for (auto _ : st) {
    h.clear();
    const double ms = gpu_ms([&] { h.add_async(keys, g.stream); });
    probe += gpu_ms([&] { probkit::bench::probe_stream(g.keys, g.n, g.sink, g.stream); });
    st.SetIterationTime(ms / 1e3);
    op += ms;
    ++iters;
  }
  report(st, op, probe, iters);
  st.counters["estimate/n"] = h.estimate() / static_cast<double>(g.n);
}

// Host copies of the first keys (at most 2.5 * 10^8: 2 GB), made on first
// use: pageable (a std::vector) and page-locked (cudaMallocHost), and a
// device buffer for the copy probe.
struct HostKeys {
  std::size_t n = 0;
  std::vector<std::uint64_t> pageable;
  std::uint64_t* pinned = nullptr;
  std::uint64_t* device_copy = nullptr;
};
const HostKeys& host_keys() {
  static HostKeys h = [] {
    HostKeys k;
    k.n = std::min<std::size_t>(g.n, 250000000);
    k.pageable.resize(k.n);
    check(cudaMallocHost(&k.pinned, k.n * sizeof(std::uint64_t)), "cudaMallocHost keys");
    check(cudaMalloc(&k.device_copy, k.n * sizeof(std::uint64_t)), "cudaMalloc copy probe");
    check(cudaMemcpy(k.pinned, g.keys, k.n * sizeof(std::uint64_t), cudaMemcpyDeviceToHost), "copy keys to host");
    std::memcpy(k.pageable.data(), k.pinned, k.n * sizeof(std::uint64_t));
    return k;
  }();
  return h;
}

// Wall-clock milliseconds of fn(), which waits for its own work: host-side
// staging is part of what these benchmarks measure.
template <class Fn>
double wall_ms(Fn&& fn) {
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double copy_probe_ms(const HostKeys& h) {
  return wall_ms([&] {
    check(cudaMemcpyAsync(h.device_copy, h.pinned, h.n * sizeof(std::uint64_t), cudaMemcpyHostToDevice, g.stream),
          "copy probe");
    check(cudaStreamSynchronize(g.stream), "copy probe");
  });
}

Keys host_batch(const HostKeys& h, bool pinned) {
  return pinned ? Keys(std::span<const std::uint64_t>(h.pinned, h.n), KeyMemory::Host)
                : Keys(std::span<const std::uint64_t>(h.pageable), KeyMemory::Host);
}

// Times sketch.add(host keys) (a BloomFilter or a HyperLogLog on the device)
// by the wall clock, beside the copy probe.
template <class Sketch>
void time_host_adds(benchmark::State& st, Sketch& sketch, bool pinned) {
  const HostKeys& h = host_keys();
  const Keys keys = host_batch(h, pinned);
  double op = 0, probe = 0;
  int iters = 0;
  for (auto _ : st) {
    sketch.clear();
    const double ms = wall_ms([&] { sketch.add(keys, g.stream); });  // the sync form waits for the stream
    probe += copy_probe_ms(h);
    st.SetIterationTime(ms / 1e3);
    op += ms;
    ++iters;
  }
  report(st, op, probe, iters, h.n);
}

void bm_bloom_add_host(benchmark::State& st, bool pinned) {
  BloomFilter f = device_filter(std::size_t{32} << 20, BloomLayout::Cacheline512);
  time_host_adds(st, f, pinned);
}

void bm_hll_add_host(benchmark::State& st, bool pinned) {
  HyperLogLog sketch(14);
  sketch.to_device();
  time_host_adds(st, sketch, pinned);
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t n = 1000000000;
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--keys=", 7) == 0) {
      n = std::strtoull(argv[i] + 7, nullptr, 10);
    } else {
      args.push_back(argv[i]);
    }
  }
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess || devices == 0) {
    std::printf("no CUDA device (%s): GPU benchmarks skipped\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount() = 0");
    return 0;
  }
  if (n < 2) n = 2;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  benchmark::AddCustomContext("gpu", prop.name);
  benchmark::AddCustomContext("keys", std::to_string(n));
  check(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking), "cudaStreamCreate");
  g.n = n;
  check(cudaMalloc(&g.keys, n * sizeof(std::uint64_t)), "cudaMalloc keys");
  check(cudaMalloc(&g.out, n), "cudaMalloc out");
  check(cudaMalloc(&g.sink, sizeof(unsigned)), "cudaMalloc sink");
  probkit::bench::fill_keys(g.keys, n, 0x1234, g.stream);
  check(cudaStreamSynchronize(g.stream), "fill keys");

  const struct {
    const char* name;
    std::size_t bytes;
  } sizes[] = {{"1MiB", std::size_t{1} << 20}, {"32MiB", std::size_t{32} << 20}, {"2GiB", std::size_t{2} << 30}};
  const struct {
    const char* name;
    BloomLayout layout;
  } layouts[] = {{"cacheline512", BloomLayout::Cacheline512}, {"parquet_sbbf", BloomLayout::ParquetSbbf}};
  auto tune = [](benchmark::internal::Benchmark* b) {
    b->UseManualTime()->Iterations(1)->Repetitions(3)->ReportAggregatesOnly(true)->Unit(benchmark::kMillisecond);
  };
  for (const auto& l : layouts) {
    for (const auto& s : sizes) {
      const std::string suffix = std::string(l.name) + "/" + s.name;
      tune(benchmark::RegisterBenchmark(("BloomAdd/" + suffix).c_str(), bm_bloom_add, s.bytes, l.layout));
      tune(benchmark::RegisterBenchmark(("BloomContains/" + suffix).c_str(), bm_bloom_contains, s.bytes, l.layout));
      tune(benchmark::RegisterBenchmark(("BloomCount/" + suffix).c_str(), bm_bloom_count, s.bytes, l.layout));
    }
  }
  tune(benchmark::RegisterBenchmark("HllAdd/p14", bm_hll_add, 14u));
  tune(benchmark::RegisterBenchmark("HllAdd/p18", bm_hll_add, 18u));
  for (const bool pinned : {false, true}) {
    const std::string where = pinned ? "page_locked" : "pageable";
    tune(benchmark::RegisterBenchmark(("BloomAddHostKeys/" + where + "/cacheline512/32MiB").c_str(), bm_bloom_add_host,
                                      pinned));
    tune(benchmark::RegisterBenchmark(("HllAddHostKeys/" + where + "/p14").c_str(), bm_hll_add_host, pinned));
  }

  int bargc = static_cast<int>(args.size());
  benchmark::Initialize(&bargc, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  cudaFree(g.keys);
  cudaFree(g.out);
  // (host_keys()'s buffers, if made, go with the process.)
  cudaFree(g.sink);
  cudaStreamDestroy(g.stream);
  return 0;
}
