// probkit_peer: the probkit side of the peer comparison (bench/peers/run.py).
// Reads the same key files the peers read and prints one JSON object.
//   probkit_peer bloom    --keys F --queries F (--capacity N --fpr X | --bytes B) [--threads T] [--reps R]
//   probkit_peer hll      (--keys F | --strings F) [--p 14] [--hash xxh64|redis] [--threads T] [--reps R]
//   probkit_peer libbloom --keys F --queries F --capacity N --fpr X [--reps R]
// Key files: raw little-endian uint64 (--keys, --queries) or one key per line
// (--strings). Queries are keys never inserted, so the hit rate is the FPR.
// `libbloom` runs libbloom and probkit at the same bits/key in this process.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <probkit/probkit.hpp>

#ifdef PROBKIT_HAVE_LIBBLOOM
#include <bloom.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  std::map<std::string, std::string> kv;
  std::string get(const std::string& k, const std::string& def = "") const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  bool has(const std::string& k) const { return kv.count(k) != 0; }
};

std::vector<std::uint64_t> read_u64(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::uint64_t> out(bytes.size() / 8);
  std::copy(bytes.begin(), bytes.begin() + out.size() * 8, reinterpret_cast<char*>(out.data()));
  return out;
}

struct Strings {
  std::vector<std::int64_t> offsets{0};
  std::vector<std::uint8_t> data;
};

Strings read_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  Strings s;
  std::string line;
  while (std::getline(in, line)) {
    s.data.insert(s.data.end(), line.begin(), line.end());
    s.offsets.push_back(static_cast<std::int64_t>(s.data.size()));
  }
  return s;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The k the blocked model finds best for n keys in nb blocks.
std::uint32_t best_k(std::uint64_t nb, std::uint64_t n) {
  std::uint32_t k = 1;
  double best = 2.0;
  for (std::uint32_t kk = 1; kk <= 16; ++kk) {
    const double f = probkit::bloom_model_fpr(probkit::BloomLayout::Cacheline512, nb, kk, n);
    if (f < best) best = f, k = kk;
  }
  return k;
}

struct BloomResult {
  double build = 0, query = 0, fpr = 0;
  std::size_t bytes = 0;
  std::uint32_t k = 0;
  std::string served;
};

// Builds a fresh filter from `keys` `reps` times and queries it; medians.
template <class Make>
BloomResult bloom_run(Make make, const std::vector<std::uint64_t>& keys,
                      const std::vector<std::uint64_t>& queries, int reps) {
  BloomResult r;
  std::vector<double> build, query;
  std::vector<std::uint8_t> out(queries.size());
  for (int i = 0; i < reps; ++i) {
    probkit::BloomFilter f = make();
    auto t0 = Clock::now();
    f.add(keys);
    build.push_back(keys.size() / seconds_since(t0));
    t0 = Clock::now();
    f.contains(queries, out);
    query.push_back(queries.size() / seconds_since(t0));
    std::uint64_t hits = 0;
    for (std::uint8_t h : out) hits += h;
    r.fpr = static_cast<double>(hits) / queries.size();
    r.bytes = f.size_bytes();
    r.k = f.k();
    r.served = probkit::last_served().target;
  }
  r.build = median(build);
  r.query = median(query);
  return r;
}

void print_bloom(const char* name, const BloomResult& r, std::size_t n, bool last) {
  std::printf("  \"%s\": {\"build_keys_per_s\": %.6g, \"query_keys_per_s\": %.6g, \"fpr\": %.6g, "
              "\"bytes\": %zu, \"bits_per_key\": %.4f, \"k\": %u, \"served\": \"%s\"}%s\n",
              name, r.build, r.query, r.fpr, r.bytes, 8.0 * r.bytes / n, r.k, r.served.c_str(), last ? "" : ",");
}

int cmd_bloom(const Args& a) {
  const auto keys = read_u64(a.get("--keys"));
  const auto queries = read_u64(a.get("--queries"));
  const int reps = std::stoi(a.get("--reps", "3"));
  probkit::set_threads(static_cast<unsigned>(std::stoul(a.get("--threads", "1"))));
  BloomResult r;
  if (a.has("--bytes")) {
    const std::size_t bytes = std::stoull(a.get("--bytes"));
    const std::uint64_t nb = bytes / 64;
    const std::uint32_t k = best_k(nb, keys.size());
    r = bloom_run([&] { return probkit::BloomFilter(nb, k); }, keys, queries, reps);
  } else {
    const std::uint64_t cap = std::stoull(a.get("--capacity"));
    const double fpr = std::stod(a.get("--fpr"));
    r = bloom_run([&] { return probkit::BloomFilter::for_capacity(cap, fpr); }, keys, queries, reps);
  }
  std::printf("{\n  \"threads\": %u,\n", probkit::threads());
  print_bloom("probkit", r, keys.size(), true);
  std::printf("}\n");
  return 0;
}

int cmd_hll(const Args& a) {
  const int reps = std::stoi(a.get("--reps", "3"));
  const auto p = static_cast<std::uint32_t>(std::stoul(a.get("--p", "14")));
  const probkit::HashSpec spec = a.get("--hash", "xxh64") == "redis" ? probkit::HashSpec::redis() : probkit::HashSpec{};
  probkit::set_threads(static_cast<unsigned>(std::stoul(a.get("--threads", "1"))));
  std::vector<std::uint64_t> u64;
  Strings str;
  std::size_t n = 0;
  if (a.has("--strings")) {
    str = read_lines(a.get("--strings"));
    n = str.offsets.size() - 1;
  } else {
    u64 = read_u64(a.get("--keys"));
    n = u64.size();
  }
  auto keys = [&]() -> probkit::Keys {
    if (a.has("--strings")) return probkit::Keys(probkit::StringBatch<std::int64_t>{str.offsets, str.data});
    return probkit::Keys(u64);
  };
  std::vector<double> rate;
  double estimate = 0;
  std::size_t bytes = 0;
  for (int i = 0; i < reps; ++i) {
    probkit::HyperLogLog h(p, spec);
    bytes = h.registers().size();
    const probkit::Keys k = keys();
    const auto t0 = Clock::now();
    h.add(k);
    rate.push_back(n / seconds_since(t0));
    estimate = h.estimate();
  }
  std::printf("{\"threads\": %u, \"n\": %zu, \"add_keys_per_s\": %.6g, \"estimate\": %.17g, "
              "\"rel_error\": %.6g, \"register_bytes\": %zu, \"served\": \"%s\"}\n",
              probkit::threads(), n, median(rate), estimate, estimate / n - 1.0, bytes,
              probkit::last_served().target.c_str());
  return 0;
}

int cmd_libbloom(const Args& a) {
#ifdef PROBKIT_HAVE_LIBBLOOM
  const auto keys = read_u64(a.get("--keys"));
  const auto queries = read_u64(a.get("--queries"));
  const int reps = std::stoi(a.get("--reps", "3"));
  const int cap = std::stoi(a.get("--capacity"));
  const double fpr = std::stod(a.get("--fpr"));
  probkit::set_threads(1);
  BloomResult lb;
  std::vector<double> build, query;
  for (int i = 0; i < reps; ++i) {
    struct bloom b;
    if (bloom_init(&b, cap, fpr) != 0) throw std::runtime_error("bloom_init failed");
    auto t0 = Clock::now();
    for (std::uint64_t k : keys) bloom_add(&b, &k, sizeof k);
    build.push_back(keys.size() / seconds_since(t0));
    std::uint64_t hits = 0;
    t0 = Clock::now();
    for (std::uint64_t q : queries) hits += bloom_check(&b, &q, sizeof q) == 1;
    query.push_back(queries.size() / seconds_since(t0));
    lb.fpr = static_cast<double>(hits) / queries.size();
    lb.bytes = static_cast<std::size_t>(b.bytes);
    lb.k = static_cast<std::uint32_t>(b.hashes);
    bloom_free(&b);
  }
  lb.build = median(build);
  lb.query = median(query);
  lb.served = bloom_version();
  // probkit with the same number of bytes, so the same bits per key.
  const std::uint64_t nb = lb.bytes / 64;
  const std::uint32_t k = best_k(nb, keys.size());
  const BloomResult pk = bloom_run([&] { return probkit::BloomFilter(nb, k); }, keys, queries, reps);
  std::printf("{\n  \"threads\": 1,\n");
  print_bloom("libbloom", lb, keys.size(), false);
  print_bloom("probkit", pk, keys.size(), true);
  std::printf("}\n");
  return 0;
#else
  (void)a;
  std::printf("{\"missing\": \"probkit_peer was built without libbloom (apt-get install libbloom-dev)\"}\n");
  return 3;
#endif
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: probkit_peer bloom|hll|libbloom --flag value ...\n");
    return 2;
  }
  Args a;
  for (int i = 2; i + 1 < argc; i += 2) a.kv[argv[i]] = argv[i + 1];
  const std::string cmd = argv[1];
  try {
    if (cmd == "bloom") return cmd_bloom(a);
    if (cmd == "hll") return cmd_hll(a);
    if (cmd == "libbloom") return cmd_libbloom(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "probkit_peer: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "probkit_peer: unknown command %s\n", cmd.c_str());
  return 2;
}
