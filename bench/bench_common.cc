#include "bench_common.hpp"

#include <cstring>
#include <map>
#include <memory>
#include <string_view>
#include <thread>

#include <probkit/detail/kernels.hpp>

namespace probkit::bench {

void Engine::apply(unsigned threads) const {
  if (backend == Backend::Simd) set_simd_target(target);
  set_threads(threads);
}

std::vector<Engine> engines() {
  std::vector<Engine> out{{Backend::Scalar, "scalar"}};
  for (const auto& b : available_backends()) {
    if (b != Backend::Simd) continue;
    for (const auto& t : simd_targets()) out.push_back({Backend::Simd, t});
  }
  return out;
}

const detail::CpuKernels& kernels_of(const Engine& e) {
  if (e.backend == Backend::Scalar) return detail::scalar_kernels();
  const detail::SimdTarget* targets = nullptr;
  const std::size_t n = detail::compiled_simd_targets(&targets);
  for (std::size_t i = 0; i < n; ++i) {
    if (e.target == targets[i].name) return *targets[i].kernels;
  }
  return detail::scalar_kernels();
}

const Engine* avx2_below_best(const std::vector<Engine>& all) {
  for (std::size_t i = 2; i < all.size(); ++i) {
    if (all[i].target == "AVX2") return &all[i];
  }
  return nullptr;
}

unsigned all_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

std::vector<unsigned> thread_counts() {
  if (all_threads() == 1) return {1};
  return {1, all_threads()};
}

const char* to_string(KeyType t) {
  switch (t) {
    case KeyType::U64: return "u64";
    case KeyType::Str16: return "str16";
    case KeyType::Str8: return "str8";
    case KeyType::Url: return "url";
    case KeyType::Id: return "id";
    case KeyType::Prehashed: return "prehashed";
  }
  return "?";
}

double key_bytes(KeyType t) {
  switch (t) {
    case KeyType::Str16: return 16.0 + 4.0;
    case KeyType::Str8: return 8.0 + 4.0;
    case KeyType::Url: return 59.5 + 4.0;  // 25.5 + 13 + 21 data bytes on average (key_url)
    case KeyType::Id: return 20.0 + 4.0;   // 9 + 11 data bytes on average for the pools' keys (key_id)
    default: return 8.0;
  }
}

std::uint64_t key_u64(std::uint64_t i) {
  // The SplitMix64 finaliser: a bijection on 64-bit values.
  std::uint64_t x = i + 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

void key_str16(std::uint64_t i, std::uint8_t out[16]) {
  const std::uint64_t a = key_u64(i), b = key_u64(i ^ 0x5555555555555555ULL);
  std::memcpy(out, &a, 8);
  std::memcpy(out + 8, &b, 8);
}

void key_url(std::uint64_t i, std::vector<std::uint8_t>& out) {
  static constexpr std::string_view kHosts[] = {"https://www.example.com/", "https://news.site.org/articles/",
                                                "http://shop.io/p/", "https://en.wikipedia.org/wiki/"};
  static constexpr std::string_view kDigits = "0123456789abcdefghijklmnopqrstuvwxyz";
  const std::uint64_t u = key_u64(i);
  std::uint64_t more = key_u64(i ^ 0x3333333333333333ULL);
  const std::string_view host = kHosts[more % 4];
  out.insert(out.end(), host.begin(), host.end());
  std::uint64_t v = u;
  for (int d = 0; d < 13; ++d, v /= 36) out.push_back(static_cast<std::uint8_t>(kDigits[v % 36]));
  const std::uint64_t extra = (more >> 2) % 43;
  for (std::uint64_t j = 0; j < extra; ++j) {
    if (j % 8 == 0) more = key_u64(more);
    out.push_back(static_cast<std::uint8_t>(kDigits[(more >> (8 * (j % 8))) % 36]));
  }
}

void key_id(std::uint64_t i, std::vector<std::uint8_t>& out) {
  static constexpr std::string_view kDigits = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::uint64_t v = i;
  do {
    out.push_back(static_cast<std::uint8_t>(kDigits[v % 36]));
    v /= 36;
  } while (v != 0);
  // Letters no digit of the key is: distinct keys give distinct strings.
  static constexpr std::string_view kMore = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
  std::uint64_t more = key_u64(i);
  const std::uint64_t extra = more % 23;
  for (std::uint64_t j = 0; j < extra; ++j) {
    if (j % 8 == 0) more = key_u64(more);
    out.push_back(static_cast<std::uint8_t>(kMore[(more >> (8 * (j % 8))) % 26]));
  }
}

Keys KeyPool::batch(std::size_t first, std::size_t count) const {
  switch (type_) {
    case KeyType::U64:
      return Keys(std::span<const std::uint64_t>(u64_.data() + first, count));
    case KeyType::Prehashed:
      return Keys(Prehashed{std::span<const std::uint64_t>(u64_.data() + first, count)});
    case KeyType::Str16:
    case KeyType::Str8:
    case KeyType::Url:
    case KeyType::Id:
      return Keys(StringBatch<std::int32_t>{
          std::span<const std::int32_t>(offsets_.data() + first, count + 1),
          std::span<const std::uint8_t>(data_)});
  }
  return Keys(std::span<const std::uint64_t>());
}

const KeyPool& column_pool(KeyType type) {
  static std::map<KeyType, std::unique_ptr<KeyPool>> pools;
  auto& slot = pools[type];
  if (!slot) {
    slot = std::make_unique<KeyPool>(type, kPoolBatches * kBatchKeys,
                                     [](std::size_t j) { return (std::uint64_t{3} << 40) + j; });
  }
  return *slot;
}

void report(benchmark::State& state, std::size_t keys_per_iteration, unsigned threads, double cpu_seconds,
            Rate probe, const std::string& served, Rate reference) {
  using benchmark::Counter;
  const double keys = static_cast<double>(state.iterations()) * static_cast<double>(keys_per_iteration);
  state.counters["keys_per_s"] = Counter(keys, Counter::kIsRate);
  state.counters["probe"] = Counter(probe.per_s);
  state.counters["vs_probe"] = Counter(keys / probe.per_s, Counter::kIsRate);
  const double per_cpu = cpu_seconds > 0 ? keys * threads / cpu_seconds : 0.0;
  state.counters["keys_per_cpu_s"] = Counter(per_cpu);
  state.counters["probe_cpu"] = Counter(probe.per_cpu_s);
  state.counters["vs_probe_cpu"] = Counter(per_cpu / probe.per_cpu_s);
  if (reference.per_s > 0) {
    state.counters["reference"] = Counter(reference.per_s);
    state.counters["vs_reference"] = Counter(keys / reference.per_s, Counter::kIsRate);
    state.counters["reference_cpu"] = Counter(reference.per_cpu_s);
    state.counters["vs_reference_cpu"] = Counter(per_cpu / reference.per_cpu_s);
  }
  state.SetLabel(served);
}

std::string size_label(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 30) && bytes % (std::size_t{1} << 30) == 0) {
    return std::to_string(bytes >> 30) + "GiB";
  }
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) {
    return std::to_string(bytes >> 20) + "MiB";
  }
  return std::to_string(bytes >> 10) + "KiB";
}

}  // namespace probkit::bench
