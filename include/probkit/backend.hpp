// Backends and run-time dispatch (README.md, "Backends").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "probkit/export.hpp"

namespace probkit {

enum class Backend : std::uint8_t {
  Auto,    // PROBKIT_BACKEND if set, else Cuda for device-resident objects, else Simd
  Scalar,  // the portable reference: the layout functions in a loop
  Simd,    // Google Highway kernels, best target the CPU supports (or the pinned one)
  Cuda,    // NVIDIA GPU kernels, for device-resident objects
};

PROBKIT_API std::string_view to_string(Backend b);
// Parses "auto", "scalar", "simd" or "cuda" (case-insensitive); throws Error otherwise.
PROBKIT_API Backend parse_backend(std::string_view name);

// What served a bulk call: the backend and, for Simd, the Highway target name
// ("AVX3", "AVX2", "SSE4", ...); for Cuda the device.
struct ServedBy {
  Backend backend = Backend::Auto;
  std::string target;
};
// The backend and target that served the last bulk call made on this thread.
PROBKIT_API ServedBy last_served();

// Backends usable on this machine now, Scalar first.
PROBKIT_API std::vector<Backend> available_backends();

// Highway targets compiled into the library and supported by this CPU, best
// first (names as hwy::TargetName gives them).
PROBKIT_API std::vector<std::string> simd_targets();
// Pins the Simd backend to one target, over the environment variable
// PROBKIT_SIMD_TARGET; an empty name lifts the pin, and the Simd backend
// returns to that variable's target where it is set, else the best supported.
// Throws Error for a target not compiled or not supported by this CPU.
PROBKIT_API void set_simd_target(std::string_view name);
// The target the Simd backend uses now.
PROBKIT_API std::string simd_target();

// Threads used by bulk CPU calls, at most 4096 (else Error); 0 means every
// core (the default, or the environment variable PROBKIT_THREADS). Results are
// identical for any count.
// A call may use fewer: a small batch one per 32768 keys, and a Bloom filter
// add whose threads share the filter (one over 2 MiB, or a batch too small to
// repay a copy per thread) at most 64, which hand each other hashes by block.
PROBKIT_API void set_threads(unsigned n);
PROBKIT_API unsigned threads();

}  // namespace probkit
