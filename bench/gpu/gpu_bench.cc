// GPU benchmarks: Bloom add / contains on filters of 1 MiB, 32 MiB (L2-
// resident) and 2 GiB, and HLL add, each over N u64 keys in device memory
// (default 10^9; --keys=N for quick runs). Each benchmark times its speed-
// of-light probe in the same process on the same sizes and reports the
// ratio: Bloom against independent random 64-byte reads of a buffer of the
// filter's size, HLL against one streaming read of the key array.
// Without a usable GPU the program says so and exits 0.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>  // the typed cudaMalloc template

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

void report(benchmark::State& st, double op_ms, double probe_ms, int iters) {
  const double n = static_cast<double>(g.n);
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

  int bargc = static_cast<int>(args.size());
  benchmark::Initialize(&bargc, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  cudaFree(g.keys);
  cudaFree(g.out);
  cudaFree(g.sink);
  cudaStreamDestroy(g.stream);
  return 0;
}
