#include "vendor_forms.h"

#include <atomic>

namespace probkit::cpu {
namespace {

VendorForms for_this_cpu() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_is("intel")) return VendorForms::kIntel;
#endif
  return VendorForms::kAmd;
}

constexpr int kNoOverride = -1;
std::atomic<int> g_override{kNoOverride};

}  // namespace

VendorForms vendor_forms() {
  const int forced = g_override.load(std::memory_order_relaxed);
  if (forced != kNoOverride) return static_cast<VendorForms>(forced);
  static const VendorForms chosen = for_this_cpu();
  return chosen;
}

const char* vendor_forms_name(VendorForms forms) {
  return forms == VendorForms::kIntel ? "Intel" : "AMD";
}

const char* add_masks_name(AddMasks masks) {
  return masks == AddMasks::kBitTable ? "bit table" : "shifts";
}

void set_vendor_forms_for_testing(std::optional<VendorForms> forms) {
  g_override.store(forms ? static_cast<int>(*forms) : kNoOverride, std::memory_order_relaxed);
}

}  // namespace probkit::cpu
