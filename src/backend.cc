#include <hwy/targets.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <span>
#include <string>

#include "dispatch.hpp"
#include "probkit/error.hpp"
#include "worker_pool.hpp"

namespace probkit {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

thread_local ServedBy t_last_served;

std::mutex g_pin_mutex;
std::string g_pinned_target;  // set_simd_target(); empty = not pinned by the API
// set_threads(n)'s n + 1; 0 until it is called (PROBKIT_THREADS decides
// then). One word: read as two, a call racing the first set_threads could
// see it set with the count still 0.
std::atomic<unsigned> g_threads_plus_one{0};

std::span<const detail::SimdTarget> compiled() {
  const detail::SimdTarget* targets = nullptr;
  const std::size_t n = detail::compiled_simd_targets(&targets);
  return {targets, n};
}

// Highway 1.0.3 runs CPUID on every unmocked hwy::SupportedTargets() call
// (about 100 us in a VM, where CPUID traps): detect once and keep the mask.
// While a test mock is set (detail::set_supported_targets_for_test), ask
// Highway, which then answers from the mock without CPUID.
std::atomic<bool> g_targets_mocked{false};

std::int64_t supported_targets() {
  if (g_targets_mocked.load(std::memory_order_acquire)) return hwy::SupportedTargets();
  static const std::int64_t detected = hwy::SupportedTargets();
  return detected;
}

std::string supported_list(std::int64_t supported) {
  std::string s;
  for (const auto& t : compiled()) {
    if ((supported & t.bit) == 0) continue;
    if (!s.empty()) s += ", ";
    s += t.name;
  }
  return s.empty() ? "none" : s;
}

// The pinned target name: the API's pin, else PROBKIT_SIMD_TARGET, else empty.
std::string pinned_target() {
  {
    std::lock_guard lock(g_pin_mutex);
    if (!g_pinned_target.empty()) return g_pinned_target;
  }
  const char* env = std::getenv("PROBKIT_SIMD_TARGET");
  return env != nullptr ? upper(env) : std::string();
}

const detail::SimdTarget& find_target(const std::string& name, std::int64_t supported) {
  for (const auto& t : compiled()) {
    if (upper(t.name) == name) {
      if ((supported & t.bit) == 0) {
        throw Error("SIMD target " + name + " is not supported by this CPU (supported: " +
                    supported_list(supported) + ")");
      }
      return t;
    }
  }
  throw Error("SIMD target " + name + " is not compiled into probkit (supported: " +
              supported_list(supported) + ")");
}

// Best compiled target the CPU supports (lower Highway bits are better), or null.
const detail::SimdTarget* best_target(std::int64_t supported) {
  const detail::SimdTarget* best = nullptr;
  for (const auto& t : compiled()) {
    if ((supported & t.bit) != 0 && (best == nullptr || t.bit < best->bit)) best = &t;
  }
  return best;
}

const detail::SimdTarget& simd_choice(std::int64_t supported) {
  const std::string pin = pinned_target();
  if (!pin.empty()) return find_target(pin, supported);
  const detail::SimdTarget* best = best_target(supported);
  if (best == nullptr) throw Error("backend simd is not available: no Highway target compiled for this CPU");
  return *best;
}

}  // namespace

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::Auto: return "auto";
    case Backend::Scalar: return "scalar";
    case Backend::Simd: return "simd";
    case Backend::Cuda: return "cuda";
  }
  return "unknown";
}

Backend parse_backend(std::string_view name) {
  const std::string n = lower(name);
  if (n == "auto") return Backend::Auto;
  if (n == "scalar") return Backend::Scalar;
  if (n == "simd") return Backend::Simd;
  if (n == "cuda") return Backend::Cuda;
  throw Error("unknown backend '" + std::string(name) + "' (valid: auto, scalar, simd, cuda)");
}

ServedBy last_served() { return t_last_served; }

std::vector<Backend> available_backends() {
  std::vector<Backend> out{Backend::Scalar};
  if (best_target(supported_targets()) != nullptr) out.push_back(Backend::Simd);
  if (detail::cuda_device_count() > 0) out.push_back(Backend::Cuda);
  return out;
}

std::vector<std::string> simd_targets() {
  std::vector<const detail::SimdTarget*> ts;
  const std::int64_t supported = supported_targets();
  for (const auto& t : compiled()) {
    if ((supported & t.bit) != 0) ts.push_back(&t);
  }
  std::sort(ts.begin(), ts.end(), [](auto* a, auto* b) { return a->bit < b->bit; });
  std::vector<std::string> out;
  for (const auto* t : ts) out.emplace_back(t->name);
  return out;
}

void set_simd_target(std::string_view name) {
  const std::string n = upper(name);
  if (!n.empty()) (void)find_target(n, supported_targets());  // validate before pinning
  std::lock_guard lock(g_pin_mutex);
  g_pinned_target = n;
}

std::string simd_target() { return simd_choice(supported_targets()).name; }

void set_threads(unsigned n) {
  if (n > detail::kMaxThreads) {
    throw Error("set_threads: " + std::to_string(n) + " is not a thread count in [0, " +
                std::to_string(detail::kMaxThreads) + "]");
  }
  g_threads_plus_one.store(n + 1);
}

unsigned threads() {
  const unsigned set = g_threads_plus_one.load();
  unsigned n = set == 0 ? 0 : set - 1;
  if (set == 0) {
    const char* env = std::getenv("PROBKIT_THREADS");
    if (env != nullptr && *env != '\0') {  // set but empty = not set, as PROBKIT_READ_BUFFER
      // Digits only: from_chars takes no sign or white space, which strtoul
      // would (and "-1" would wrap).
      const char* end = env + std::strlen(env);
      unsigned v = 0;
      const auto [stop, ec] = std::from_chars(env, end, v);
      if (ec != std::errc() || stop != end || v > detail::kMaxThreads) {
        throw Error(std::string("PROBKIT_THREADS='") + env + "' is not a thread count in [0, " +
                    std::to_string(detail::kMaxThreads) + "]");
      }
      n = v;
    }
  }
  if (n == 0) n = detail::hardware_threads();
  return n;
}

namespace detail {

void set_supported_targets_for_test(std::int64_t targets) {
  hwy::SetSupportedTargetsForTest(targets);
  g_targets_mocked.store(targets != 0, std::memory_order_release);
}

Backend backend_from_environment() {
  const char* env = std::getenv("PROBKIT_BACKEND");
  if (env == nullptr || *env == '\0') return Backend::Auto;
  try {
    return parse_backend(env);
  } catch (const Error&) {
    throw Error(std::string("PROBKIT_BACKEND='") + env + "' is not a backend (valid: auto, scalar, simd, cuda)");
  }
}

CpuChoice resolve_cpu(Backend requested) {
  Backend b = requested == Backend::Auto ? backend_from_environment() : requested;
  if (b == Backend::Scalar) return {Backend::Scalar, &scalar_kernels(), "scalar"};
  const std::int64_t supported = supported_targets();
  if (b == Backend::Auto) b = best_target(supported) != nullptr ? Backend::Simd : Backend::Scalar;
  switch (b) {
    case Backend::Scalar: return {Backend::Scalar, &scalar_kernels(), "scalar"};
    case Backend::Simd: {
      const SimdTarget& t = simd_choice(supported);
      return {Backend::Simd, t.kernels, t.name};
    }
    case Backend::Cuda:
      throw Error("backend cuda cannot serve a host-resident object; move it with to_device() first");
    case Backend::Auto: break;
  }
  throw unknown_backend(b);
}

Error unknown_backend(Backend b) {
  return Error("unknown backend " + std::to_string(static_cast<int>(b)) + " (valid: auto, scalar, simd, cuda)");
}

const CpuKernels& batch_check_kernels() {
  try {
    return *resolve_cpu(Backend::Auto).kernels;
  } catch (const Error&) {
    const SimdTarget* best = best_target(supported_targets());
    return best != nullptr ? *best->kernels : scalar_kernels();
  }
}

void note_served(Backend backend, std::string_view target) {
  t_last_served.backend = backend;
  t_last_served.target.assign(target);
}

unsigned workers_for(std::size_t n) {
  // Below this many keys per thread, starting a thread costs more than it saves.
  constexpr std::size_t kMinKeysPerWorker = std::size_t{1} << 15;
  const std::size_t by_size = std::max<std::size_t>(1, n / kMinKeysPerWorker);
  return static_cast<unsigned>(std::min<std::size_t>(threads(), by_size));
}

}  // namespace detail
}  // namespace probkit
