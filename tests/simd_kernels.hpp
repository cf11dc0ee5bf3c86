// The fixture and helpers of the SIMD kernel tests (simd_*kernels_test.cc):
// every compiled Highway target that this CPU supports, held to the scalar
// reference kernel by kernel on random data (DESIGN.md §6 at the level of
// cpu/simd.cc).
#pragma once

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cpu/vendor_forms.h"
#include "probkit/detail/kernels.hpp"

namespace probkit::detail::simd_test {

inline std::vector<const SimdTarget*> supported_targets() {
  const SimdTarget* all = nullptr;
  const std::size_t n = compiled_simd_targets(&all);
  std::vector<const SimdTarget*> out;
  for (std::size_t i = 0; i < n; ++i) {
    if ((hwy::SupportedTargets() & all[i].bit) != 0) out.push_back(&all[i]);
  }
  return out;
}

// Lengths 0..70 cover every vector tail; 10^5 covers many hash chunks.
inline std::vector<std::size_t> lengths() {
  std::vector<std::size_t> out;
  for (std::size_t n = 0; n <= 70; ++n) out.push_back(n);
  out.push_back(100000);
  out.push_back(100003);  // a tail after whole steps of 4, 5 or 8 keys
  return out;
}

inline std::vector<std::uint64_t> random_u64(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = rng();
  return v;
}

// Storage whose data() is deliberately misaligned by `offset` elements.
template <class T>
struct Misaligned {
  std::vector<T> buf;
  std::size_t offset;
  Misaligned(std::size_t n, std::size_t off) : buf(n + off + 1), offset(off) {}
  T* data() { return buf.data() + offset; }
};

class SimdKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    targets_ = supported_targets();
    if (targets_.empty()) GTEST_SKIP() << "no compiled SIMD target runs on this CPU";
  }
  void TearDown() override { cpu::set_vendor_forms_for_testing(std::nullopt); }

  // The targets whose kernels each vendor choice changes.
  static constexpr std::int64_t kAddMasksTargets = HWY_AVX3 | HWY_AVX3_DL;
  // AVX2's u64 keys and 16-byte strings (avx2_u64_hash(), avx2_string16_hash()).
  static constexpr std::int64_t kHashFormsTargets = HWY_AVX2;

  // fn(target) for every target with the AMD forms (cpu/vendor_forms.h), and
  // once more with the Intel forms for each target in `forms_differ` (those
  // whose kernels under test they change): each form is held to the
  // reference whichever this CPU's vendor picks.
  template <class Fn>
  void for_each_target_and_vendor_forms(std::int64_t forms_differ, const Fn& fn) {
    for (cpu::VendorForms forms : {cpu::VendorForms::kAmd, cpu::VendorForms::kIntel}) {
      SCOPED_TRACE(std::string("vendor forms: ") + cpu::vendor_forms_name(forms));
      cpu::set_vendor_forms_for_testing(forms);
      for (const SimdTarget* t : targets_) {
        if (forms == cpu::VendorForms::kIntel && (t->bit & forms_differ) == 0) continue;
        fn(t);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }

  std::vector<const SimdTarget*> targets_;
  std::mt19937_64 rng_{20261130};
};

// The string batch's offsets check: what kernels.hpp says it returns.
template <class Offset>
OffsetsCheck check_offsets_oracle(const Offset* off, std::size_t count, Offset limit) {
  for (std::size_t i = 0; i < count; ++i) {
    if (off[i] > limit || (i > 0 && off[i] < off[i - 1])) return {false, 0};
  }
  for (std::uint8_t width : {8, 16}) {
    bool all = count >= 2;
    for (std::size_t i = 0; i + 1 < count; ++i) {
      all = all &&
            static_cast<std::uint64_t>(off[i + 1]) - static_cast<std::uint64_t>(off[i]) == width;
    }
    if (all) return {true, width};
  }
  return {true, 0};
}

// One string column: lengths drawn from `max_len`, stored back to back from
// `first` into data that ends exactly at the last string's end (so the last
// tails have no slack behind them).
struct StringColumn {
  std::vector<std::uint8_t> data;
  std::vector<std::int32_t> off32;
  std::vector<std::int64_t> off64;
  // Fixed::Mostly: every string is max_len bytes long except those that
  // rng() % 16 picks (about one in sixteen: groups of one length and mixed
  // ones). Fixed::All: every string is max_len bytes long (a batch of
  // fixed-width keys, which every target hashes by a fixed-width path).
  enum class Fixed { No, Mostly, All };
  StringColumn(std::mt19937_64& rng, std::size_t n, std::size_t max_len, std::size_t first, Fixed fixed = Fixed::No) {
    off64.push_back(static_cast<std::int64_t>(first));
    for (std::size_t i = 0; i < n; ++i) {
      const bool full = fixed == Fixed::All || (fixed == Fixed::Mostly && rng() % 16 != 0);
      const std::size_t len = full ? max_len : rng() % (max_len + 1);
      off64.push_back(off64.back() + static_cast<std::int64_t>(len));
    }
    fill(rng);
  }
  // Strings of the given lengths, from offset 0.
  StringColumn(std::mt19937_64& rng, const std::vector<std::size_t>& lengths) {
    off64.push_back(0);
    for (std::size_t len : lengths) off64.push_back(off64.back() + static_cast<std::int64_t>(len));
    fill(rng);
  }
  void fill(std::mt19937_64& rng) {
    data.resize(static_cast<std::size_t>(off64.back()));
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    off32.assign(off64.begin(), off64.end());
  }
  // With `marked`, the batch says its fixed width (KeyBatch::fixed_width) as
  // the batch check would, and the kernels take it instead of scanning each
  // window's offsets; unmarked, they scan.
  KeyBatch batch(KeyKind kind, bool marked = false) const {
    KeyBatch kb;
    kb.kind = kind;
    kb.n = off64.size() - 1;
    kb.keys = kind == KeyKind::Offsets32 ? static_cast<const void*>(off32.data())
                                         : static_cast<const void*>(off64.data());
    kb.data = data.data();
    kb.data_size = data.size();
    if (marked) kb.fixed_width = fixed_width();
    return kb;
  }
  // 8 or 16 if there are strings and every one is that long, else 0.
  std::uint8_t fixed_width() const {
    return check_offsets_oracle(off64.data(), off64.size(), off64.back()).fixed_width;
  }
};

}  // namespace probkit::detail::simd_test
