// The backend configurations every identity test runs over (DESIGN.md §6):
// Scalar, then Simd once per Highway target this CPU supports, each with 1, 2
// and (on more than two hardware threads) all threads, then Cuda on device 0
// when the library has a usable CUDA device. Tests are value-parameterised
// over backend_matrix(); the reference they compare against is Scalar with
// one thread.
//
// Device seam: a configuration with `device = true` runs on a device-resident
// object. Generic bodies call place(obj, cfg) before bulk calls and fetch(obj)
// before comparing; for host configurations both are identities. They use
// to_device()/to_host() when the objects have them, so this file compiles with
// and without the CUDA backend.
#pragma once
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dispatch.hpp"     // set_supported_targets_for_test
#include "worker_pool.hpp"  // hardware_threads: what threads 0 means
#include "probkit/probkit.hpp"

namespace probkit::test {

struct BackendConfig {
  Backend backend = Backend::Scalar;  // asked for explicitly in every bulk call
  std::string target = "scalar";      // what last_served().target must report
  std::int64_t hwy_bit = 0;           // Simd: the only target hwy::SupportedTargets() reports
  unsigned threads = 1;               // probkit::set_threads; 0 = every core
  bool device = false;                // the object lives on CUDA device 0; `target` is a prefix

  // A gtest-safe name such as "Scalar_threads1", "AVX2_threadsAll" or "Cuda0".
  std::string name() const {
    if (device) return "Cuda0";
    std::string base = backend == Backend::Simd ? target : std::string("Scalar");
    for (char& c : base) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return base + "_threads" + (threads == 0 ? std::string("All") : std::to_string(threads));
  }
};

inline void PrintTo(const BackendConfig& c, std::ostream* os) { *os << c.name(); }

// The Highway bit whose hwy::TargetName is `name` (0 if none).
inline std::int64_t hwy_target_bit(std::string_view name) {
  for (int i = 0; i < 63; ++i) {
    const std::int64_t bit = std::int64_t{1} << i;
    if (name == hwy::TargetName(bit)) return bit;
  }
  return 0;
}

inline BackendConfig reference_config() { return {}; }

// Scalar, then each Simd target, each with threads 1, 2 and all; read at run
// time so the same binary covers whatever the library was built with. "All"
// (threads 0: one worker per hardware thread) is left out where it means 1 or
// 2 workers, which the other two runs are.
inline std::vector<BackendConfig> backend_matrix() {
  std::vector<unsigned> thread_counts = {1, 2};
  if (probkit::detail::hardware_threads() > 2) thread_counts.push_back(0);
  std::vector<BackendConfig> out;
  for (unsigned t : thread_counts) out.push_back({Backend::Scalar, "scalar", 0, t, false});
  for (const std::string& target : simd_targets()) {
    for (unsigned t : thread_counts) out.push_back({Backend::Simd, target, hwy_target_bit(target), t, false});
  }
  const std::vector<Backend> available = available_backends();
  if (std::find(available.begin(), available.end(), Backend::Cuda) != available.end()) {
    out.push_back({Backend::Cuda, "cuda:0", 0, 1, true});
  }
  return out;
}

inline std::string config_name(const ::testing::TestParamInfo<BackendConfig>& info) {
  return info.param.name();
}

// Sets (or unsets, for nullopt) an environment variable for its lifetime.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// Applies a configuration for its lifetime: thread count and, for Simd, a
// Highway mock that leaves exactly the configuration's target supported, so
// that Backend::Simd and Backend::Auto both select it. A PROBKIT_SIMD_TARGET
// pin from the caller's environment would override the mock, so it is unset
// meanwhile. Restores everything afterwards.
class ScopedBackend {
 public:
  explicit ScopedBackend(const BackendConfig& c) : no_pin_("PROBKIT_SIMD_TARGET", std::nullopt) {
    set_threads(c.threads);
    if (c.backend == Backend::Simd) {
      if (c.hwy_bit == 0) ADD_FAILURE() << "SIMD target " << c.target << " has no Highway bit";
      probkit::detail::set_supported_targets_for_test(c.hwy_bit);
    }
  }
  ~ScopedBackend() {
    probkit::detail::set_supported_targets_for_test(0);
    set_threads(0);
  }
  ScopedBackend(const ScopedBackend&) = delete;
  ScopedBackend& operator=(const ScopedBackend&) = delete;

 private:
  ScopedEnv no_pin_;
};

// Device seam: moves `obj` to where `cfg` runs it. Host configurations: nothing.
template <class T>
void place(T& obj, const BackendConfig& cfg) {
  if constexpr (requires { obj.to_device(0); }) {
    if (cfg.device) obj.to_device(0);
  } else {
    if (cfg.device) ADD_FAILURE() << "a device configuration without to_device()";
  }
}

// Device seam: a host copy of `obj` to compare with the reference.
template <class T>
T fetch(const T& obj) {
  T copy = obj;
  if constexpr (requires { copy.on_device(); copy.to_host(); }) {
    if (copy.on_device()) copy.to_host();
  }
  return copy;
}

// The last bulk call on this thread was served as `cfg` says.
inline void expect_served(const BackendConfig& cfg) {
  const ServedBy s = last_served();
  EXPECT_EQ(s.backend, cfg.backend) << "served by " << to_string(s.backend) << " for " << cfg.name();
  if (cfg.device) {
    EXPECT_EQ(s.target.rfind(cfg.target, 0), 0u) << s.target << " for " << cfg.name();
  } else {
    EXPECT_EQ(s.target, cfg.target) << "for " << cfg.name();
  }
}

// Index of the first differing byte, or -1 if equal (sizes included).
inline long long first_difference(std::span<const std::uint8_t> a, std::span<const std::uint8_t> b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) return static_cast<long long>(i);
  }
  return a.size() == b.size() ? -1 : static_cast<long long>(n);
}

}  // namespace probkit::test
