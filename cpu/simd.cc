// Highway SIMD backend: placeholder until the kernels land; no target is
// registered, so the Simd backend is absent from the dispatch list.
#include "probkit/detail/kernels.hpp"

namespace probkit::detail {
std::size_t compiled_simd_targets(const SimdTarget** out) {
  *out = nullptr;
  return 0;
}
}  // namespace probkit::detail
