// probkit_bench: every CPU benchmark in one program. Defaults keep a full run
// bounded (a few minutes): short minimum time, 3 repetitions, aggregates
// (mean, median, stddev) only; any --benchmark_* flag given overrides them.
#include <cstring>
#include <string>
#include <vector>

#include "bench_common.hpp"
#include "cpu/vendor_forms.h"
#include "probes.hpp"

// Whether the command line asks for random interleaving of repetitions: the
// report says how each figure was measured.
bool random_interleaving(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--benchmark_enable_random_interleaving=true" || arg == "--benchmark_enable_random_interleaving=1") {
      return true;
    }
  }
  return false;
}

int main(int argc, char** argv) {
  const bool interleaved = random_interleaving(argc, argv);
  std::vector<char*> args(argv, argv + argc);
  static std::string defaults[] = {"--benchmark_min_time=0.1", "--benchmark_repetitions=3",
                                   "--benchmark_report_aggregates_only=true"};
  for (std::string& d : defaults) {
    const std::string flag = d.substr(0, d.find('='));
    bool given = false;
    for (int i = 1; i < argc; ++i) given |= std::strncmp(argv[i], flag.c_str(), flag.size()) == 0;
    if (!given) args.insert(args.begin() + 1, d.data());
  }
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  benchmark::AddCustomContext("probkit_engines", [] {
    std::string s;
    for (const auto& e : probkit::bench::engines()) s += (s.empty() ? "" : ",") + e.target;
    return s;
  }());
  benchmark::AddCustomContext("probkit_threads_all", std::to_string(probkit::bench::all_threads()));
  benchmark::AddCustomContext("probkit_random_interleaving", interleaved ? "true" : "false");
  // How HLL add's "hashing alone" is measured (the report words it from this;
  // runs without it measured it once per case, over other keys).
  benchmark::AddCustomContext("probkit_hashing_alone", "column keys, recent");
  // The kernels' forms chosen by the CPU's vendor (cpu/vendor_forms.h), for
  // readers of the figures: how the AVX-512 Bloom add builds its masks into
  // filters in the cache, and how AVX2 hashes u64 keys.
  benchmark::AddCustomContext("probkit_vendor_forms",
                              probkit::cpu::vendor_forms_name(probkit::cpu::vendor_forms()));
  benchmark::AddCustomContext("probkit_avx512_add_masks",
                              probkit::cpu::add_masks_name(probkit::cpu::avx512_add_masks()));
  if (const double hz = probkit::bench::core_clock_hz(); hz > 0) {
    benchmark::AddCustomContext("probkit_core_clock_ghz", std::to_string(hz / 1e9));
  }
  probkit::bench::register_hash_benchmarks();
  probkit::bench::register_hll_benchmarks();
  probkit::bench::register_bloom_benchmarks();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
