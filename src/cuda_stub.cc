// Linked when probkit is built without the CUDA backend.
#include "dispatch.hpp"

namespace probkit::detail {
int cuda_device_count() { return 0; }
}  // namespace probkit::detail
