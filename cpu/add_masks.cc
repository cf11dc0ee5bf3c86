#include "add_masks.h"

#include <atomic>

namespace probkit::cpu {
namespace {

AddMasks for_this_cpu() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_is("intel")) return AddMasks::kBitTable;
#endif
  return AddMasks::kShifts;
}

constexpr int kNoOverride = -1;
std::atomic<int> g_override{kNoOverride};

}  // namespace

AddMasks avx512_add_masks() {
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced != kNoOverride) return static_cast<AddMasks>(forced);
  static const AddMasks chosen = for_this_cpu();
  return chosen;
}

const char* add_masks_name(AddMasks masks) {
  return masks == AddMasks::kBitTable ? "bit table" : "shifts";
}

void set_avx512_add_masks_for_testing(std::optional<AddMasks> masks) {
  g_override.store(masks ? static_cast<int>(*masks) : kNoOverride, std::memory_order_relaxed);
}

}  // namespace probkit::cpu
