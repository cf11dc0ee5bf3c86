// Internal: resolving Backend::Auto and friends to the code that runs.
#pragma once
#include <cstdint>
#include <string_view>

#include "probkit/backend.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/error.hpp"

namespace probkit::detail {

struct CpuChoice {
  Backend backend;           // Scalar or Simd
  const CpuKernels* kernels;
  const char* target;        // "scalar" or the Highway target name
};

// For a host-resident object: Auto -> PROBKIT_BACKEND, else Simd if compiled
// and supported, else Scalar. Cuda (asked for, or from the environment) is an
// Error naming the reason. Records nothing; call note_served() once it ran.
CpuChoice resolve_cpu(Backend requested);

// The kernels that check key batches as they are made (src/keys.cc): those
// resolve_cpu(Auto) picks, or the best this CPU supports where that throws
// (PROBKIT_BACKEND=cuda, a bad setting): the bulk call reports that itself.
const CpuKernels& batch_check_kernels();

// The error for a Backend that is none of Auto, Scalar, Simd and Cuda (a cast
// from a bad integer), naming its value; the host and the device paths both
// throw it.
Error unknown_backend(Backend b);

// Backend::Auto resolved through PROBKIT_BACKEND only (Auto if unset).
Backend backend_from_environment();

void note_served(Backend backend, std::string_view target);

// Tests: makes the CPU report exactly `targets` (hwy::SetSupportedTargetsForTest,
// so Highway's own dynamic dispatch follows too); 0 returns to the real CPU.
void set_supported_targets_for_test(std::int64_t targets);

// Worker threads for a bulk call of n keys (at least 1).
unsigned workers_for(std::size_t n);

}  // namespace probkit::detail

namespace probkit::detail {
// Number of CUDA devices usable now; 0 when built without CUDA or none found.
int cuda_device_count();
}  // namespace probkit::detail
