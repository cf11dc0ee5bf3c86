// Linked when probkit is built without the CUDA backend: no device is ever
// usable, so no object can become device-resident; every entry point that
// would need one says so.
#include <string>

#include "cuda_backend.hpp"
#include "dispatch.hpp"
#include "probkit/error.hpp"

namespace probkit::detail {

int cuda_device_count() { return 0; }

namespace cuda {
namespace {
[[noreturn]] void unavailable() {
  throw Error("backend cuda is not available: probkit was built without CUDA (PROBKIT_CUDA=OFF or no nvcc)");
}
}  // namespace

void* alloc(std::size_t, int) { unavailable(); }
void free(void*, int) noexcept {}
void copy(void*, const void*, std::size_t) { unavailable(); }
void zero(void*, std::size_t, int) { unavailable(); }
bool is_device_pointer(const void*) { return false; }
std::string device_label(int device) { return "cuda:" + std::to_string(device); }
void require_device_backend(Backend) { unavailable(); }
void bloom_add(const BloomRef&, const KeyBatch&, HashSpec, const Launch&) { unavailable(); }
void bloom_contains(const BloomRef&, const KeyBatch&, HashSpec, std::uint8_t*, std::uint64_t*,
                    const Launch&) {
  unavailable();
}
void bloom_combine(std::uint32_t*, const std::uint32_t*, std::size_t, bool, const Launch&) { unavailable(); }
void hll_add(std::uint8_t*, std::uint32_t, const KeyBatch&, HashSpec, const Launch&) { unavailable(); }
void hll_max(std::uint8_t*, const std::uint8_t*, std::size_t, const Launch&) { unavailable(); }
void hll_histogram(const std::uint8_t*, std::uint32_t, std::uint32_t*, const Launch&) { unavailable(); }

}  // namespace cuda
}  // namespace probkit::detail
