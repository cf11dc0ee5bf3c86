// probkit bench: every backend (and every SIMD target) on the same generated
// keys — throughput, measured vs modelled false-positive rate, HyperLogLog
// error — and a check that all of them produce the same bytes as Scalar.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cli/errors.hpp"
#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "probkit/error.hpp"
#include "probkit/keys.hpp"

namespace probkit::cli {
namespace {

// SplitMix64's finalizer: a bijection on 64-bit values, so distinct inputs
// give distinct keys. Present keys come from even inputs, absent from odd.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

struct StringKeys {
  std::vector<std::int64_t> offsets;
  std::vector<std::uint8_t> data;
  Keys keys() const { return Keys(StringBatch<std::int64_t>{offsets, data}); }
};

constexpr std::size_t kStringBytes = 16;

std::vector<std::uint64_t> make_u64(std::uint64_t n, std::uint64_t parity) {
  std::vector<std::uint64_t> v(n);
  for (std::uint64_t i = 0; i < n; ++i) v[i] = mix(2 * i + parity);
  return v;
}

// 16-byte strings whose first 8 bytes are distinct by construction.
StringKeys make_strings(std::uint64_t n, std::uint64_t parity) {
  StringKeys s;
  s.offsets.resize(n + 1);
  s.data.resize(n * kStringBytes);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t a = mix(2 * i + parity);
    const std::uint64_t b = mix(a);
    std::memcpy(&s.data[i * kStringBytes], &a, 8);
    std::memcpy(&s.data[i * kStringBytes + 8], &b, 8);
    s.offsets[i] = static_cast<std::int64_t>(i * kStringBytes);
  }
  s.offsets[n] = static_cast<std::int64_t>(n * kStringBytes);
  return s;
}

// Median wall time of up to `reps` runs of fn() (setup() before each,
// untimed); stops repeating once a second has been spent, so that slow
// backends keep the whole benchmark short.
template <class Setup, class Fn>
double median_seconds(unsigned reps, Setup&& setup, Fn&& fn) {
  std::vector<double> t;
  double spent = 0;
  for (unsigned r = 0; r < reps && spent < 1.0; ++r) {
    setup();
    const auto start = std::chrono::steady_clock::now();
    fn();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    spent += t.back();
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

struct Data {
  std::vector<std::uint64_t> u64, u64_absent;
  StringKeys str, str_absent;
};

// What one backend produced: the state compared bit for bit against Scalar.
struct Outcome {
  std::vector<std::uint8_t> filter_u64, filter_str, hll_u64, hll_str;
  std::uint64_t false_pos_u64 = 0, false_pos_str = 0;
};

struct Row {
  std::string label;
  double add_u64 = 0, query_u64 = 0, add_str = 0, query_str = 0, hll_u64 = 0;
  double fpr = 0, expected_fpr = 0, hll_error = 0;
  bool no_false_negatives = true;
};

double mkeys(std::uint64_t n, double secs) { return secs > 0 ? static_cast<double>(n) / secs / 1e6 : 0; }

Outcome run_backend(Backend backend, const Data& d, unsigned reps, Row& row) {
  Outcome out;
  const std::uint64_t n = d.u64.size();
  const std::uint64_t ns = d.str.offsets.size() - 1;
  const Keys u64(d.u64), u64_absent(d.u64_absent);
  const Keys str = d.str.keys(), str_absent = d.str_absent.keys();

  // Cuda serves device-resident objects: they move to the GPU before the timed
  // calls (keys stay in host memory and stream through pinned buffers) and
  // back to the host before their bytes are compared.
  const bool device = backend == Backend::Cuda;
  auto place = [device](auto& obj) {
    if (device) obj.to_device();
  };
  auto fetch = [device](auto& obj) {
    if (device) obj.to_host();
  };

  BloomFilter f = BloomFilter::for_capacity(n, 0.01);
  place(f);
  row.add_u64 = mkeys(n, median_seconds(reps, [&] { f.clear(); }, [&] { f.add(u64, backend); }));
  std::vector<std::uint8_t> hits(n);
  row.query_u64 = mkeys(n, median_seconds(reps, [] {}, [&] { f.contains(u64, hits, backend); }));
  row.no_false_negatives = std::all_of(hits.begin(), hits.end(), [](std::uint8_t h) { return h == 1; });
  out.false_pos_u64 = f.count(u64_absent, backend);
  row.fpr = static_cast<double>(out.false_pos_u64) / static_cast<double>(d.u64_absent.size());
  row.expected_fpr = f.expected_fpr(n);
  fetch(f);
  out.filter_u64.assign(f.data().begin(), f.data().end());

  BloomFilter fs = BloomFilter::for_capacity(ns, 0.01);
  place(fs);
  row.add_str = mkeys(ns, median_seconds(reps, [&] { fs.clear(); }, [&] { fs.add(str, backend); }));
  std::vector<std::uint8_t> str_hits(ns);
  row.query_str = mkeys(ns, median_seconds(reps, [] {}, [&] { fs.contains(str, str_hits, backend); }));
  row.no_false_negatives =
      row.no_false_negatives && std::all_of(str_hits.begin(), str_hits.end(), [](std::uint8_t h) { return h == 1; });
  out.false_pos_str = fs.count(str_absent, backend);
  fetch(fs);
  out.filter_str.assign(fs.data().begin(), fs.data().end());

  HyperLogLog h(14);
  place(h);
  row.hll_u64 = mkeys(n, median_seconds(reps, [&] { h.clear(); }, [&] { h.add(u64, backend); }));
  row.hll_error = h.estimate() / static_cast<double>(n) - 1.0;
  fetch(h);
  out.hll_u64.assign(h.registers().begin(), h.registers().end());
  HyperLogLog hs(14);
  place(hs);
  hs.add(str, backend);
  fetch(hs);
  out.hll_str.assign(hs.registers().begin(), hs.registers().end());
  return out;
}

// Names what differs between two outcomes, empty when identical.
std::string difference(const Outcome& a, const Outcome& b) {
  std::string d;
  auto note = [&](bool same, const char* what) {
    if (!same) d += d.empty() ? what : std::string(", ") + what;
  };
  note(a.filter_u64 == b.filter_u64, "u64 filter bytes");
  note(a.filter_str == b.filter_str, "string filter bytes");
  note(a.false_pos_u64 == b.false_pos_u64 && a.false_pos_str == b.false_pos_str, "query answers");
  note(a.hll_u64 == b.hll_u64, "u64 HLL registers");
  note(a.hll_str == b.hll_str, "string HLL registers");
  return d;
}

}  // namespace

int run_bench(const Args& argv) {
  const auto specs = with_common_options(
      {{"keys", "N", "u64 keys (default 1e7)"},
       {"string-keys", "N", "16-byte string keys (default 1e6)"},
       {"absent-keys", "N", "absent keys for the measured FPR (default 1e6)"},
       {"reps", "R", "timed repetitions (at most; stops after 1 s), median reported (default 3)"}});
  const ParsedArgs args = parse(argv, specs, "bench");
  if (print_help_if_asked(args, "probkit bench [--keys N] [--string-keys N] [--absent-keys N] [--reps R]\n"
                                "Runs every available backend and SIMD target (or only --backend) on the same\n"
                                "generated keys; exits 2 if any differs from Scalar.",
                          specs)) {
    return 0;
  }
  const Common common = apply_common(args, /*allow_cuda=*/true);
  const std::uint64_t n = parse_u64("keys", args.value("keys").value_or("1e7"), 1, std::uint64_t{1} << 32);
  const std::uint64_t ns = parse_u64("string-keys", args.value("string-keys").value_or("1e6"), 1, std::uint64_t{1} << 30);
  const std::uint64_t na = parse_u64("absent-keys", args.value("absent-keys").value_or("1e6"), 1, std::uint64_t{1} << 32);
  const auto reps = static_cast<unsigned>(parse_u64("reps", args.value("reps").value_or("3"), 1, 100));

  Data d{make_u64(n, 0), make_u64(na, 1), make_strings(ns, 0), make_strings(na, 1)};
  const BloomFilter shape = BloomFilter::for_capacity(n, 0.01);
  std::printf("probkit bench: %llu u64 keys, %llu 16-byte strings, %llu absent keys, %u threads, median of up to %u runs\n",
              static_cast<unsigned long long>(n), static_cast<unsigned long long>(ns),
              static_cast<unsigned long long>(na), common.threads, reps);
  std::printf("Bloom filter for_capacity(n, 0.01): cacheline512, %llu bytes, k = %u; HyperLogLog p = 14\n",
              static_cast<unsigned long long>(shape.size_bytes()), shape.k());
  std::printf("throughput in M keys/s\n\n");
  std::printf("%-14s %9s %9s %9s %9s %9s %9s %9s %9s  %s\n", "backend", "add", "contains", "add str", "cont str",
              "FPR", "model", "HLL add", "HLL err", "identical");

  // Rows: Scalar first (the reference), then each SIMD target, then Cuda.
  struct Plan {
    Backend backend;
    std::string target;
  };
  std::vector<Plan> plans;
  for (Backend b : available_backends()) {
    if (common.backend != Backend::Auto && b != common.backend && b != Backend::Scalar) continue;
    if (b == Backend::Simd) {
      for (const std::string& t : simd_targets()) plans.push_back({b, t});
    } else {
      plans.push_back({b, ""});
    }
  }
  if (common.backend == Backend::Simd &&
      std::none_of(plans.begin(), plans.end(), [](const Plan& p) { return p.backend == Backend::Simd; })) {
    std::printf("%-14s not available in this build or on this CPU\n", "simd");
  }
  if (common.backend == Backend::Cuda &&
      std::none_of(plans.begin(), plans.end(), [](const Plan& p) { return p.backend == Backend::Cuda; })) {
    std::printf("%-14s not available (no CUDA device, or built without CUDA)\n", "cuda");
  }

  std::optional<Outcome> reference;
  bool all_same = true;
  for (const Plan& plan : plans) {
    Row row;
    row.label = std::string(to_string(plan.backend)) + (plan.target.empty() ? "" : ":" + plan.target);
    if (!plan.target.empty()) set_simd_target(plan.target);
    Outcome o;
    try {
      o = run_backend(plan.backend, d, reps, row);
    } catch (const probkit::Error& e) {
      // A backend that cannot serve host-resident objects is reported, not failed.
      std::printf("%-14s skipped: %s\n", row.label.c_str(), e.what());
      if (!plan.target.empty()) set_simd_target("");
      continue;
    }
    if (!plan.target.empty()) set_simd_target("");
    std::string same = "reference";
    if (!reference) {
      reference = std::move(o);
    } else {
      const std::string diff = difference(*reference, o);
      same = diff.empty() ? "yes" : "NO: " + diff;
      all_same = all_same && diff.empty();
    }
    if (!row.no_false_negatives) {
      same += " (FALSE NEGATIVES)";
      all_same = false;
    }
    std::printf("%-14s %9.1f %9.1f %9.1f %9.1f %8.4f%% %8.4f%% %9.1f %+8.3f%%  %s\n", row.label.c_str(), row.add_u64,
                row.query_u64, row.add_str, row.query_str, 100 * row.fpr, 100 * row.expected_fpr, row.hll_u64,
                100 * row.hll_error, same.c_str());
    std::fflush(stdout);
  }
  std::printf("\nHLL p = 14 standard error 0.81%%; FPR measured on %llu absent u64 keys\n",
              static_cast<unsigned long long>(na));
  std::printf("all backends bit-identical to scalar: %s\n", all_same ? "yes" : "NO");
  return all_same ? 0 : 2;
}

}  // namespace probkit::cli
