// Kernel forms chosen once per process from the CPU's vendor, where Intel's
// and AMD's cores are bound by different parts of the core and the faster
// form on one is slower on the other (docs/PERF-NOTES.md has the figures,
// in the sections each choice below names). Every form gives the same bits;
// tests run each one on any machine (set_vendor_forms_for_testing).
#pragma once
#include <cstddef>
#include <optional>

namespace probkit::cpu {

enum class VendorForms {
  kAmd,    // AMD's, and those of every CPU that is not Intel's
  kIntel,  // Intel's
};

// kIntel on Intel CPUs, kAmd on the others (the override, if set).
VendorForms vendor_forms();

// "AMD" or "Intel", for benchmark context and test traces.
const char* vendor_forms_name(VendorForms forms);

// For tests, so that every form runs on any machine: until reset with
// nullopt, vendor_forms() returns `forms`.
void set_vendor_forms_for_testing(std::optional<VendorForms> forms);

// How the AVX-512 cacheline512 add builds a key's 16-word mask into a filter
// in the cache ("AVX-512 add: shifts, table masks and the other forms tried").
enum class AddMasks {
  // Each probe's part by a shift (vpsubd + vpsrlvd): vector ALU work, which
  // AMD's Zen 4 and 5 spread over four pipes (measured on both) and Intel's
  // cores over two.
  kShifts,
  // Each probe's part loaded from a 32 KiB table of one-bit lines
  // (cacheline_bit_table.h): load-port work, and 32 KiB of L1.
  kBitTable,
};
inline AddMasks avx512_add_masks() {
  return vendor_forms() == VendorForms::kIntel ? AddMasks::kBitTable : AddMasks::kShifts;
}
// "shifts" or "bit table".
const char* add_masks_name(AddMasks masks);

// How AVX2 hashes u64 keys (hash-inl.h, Hash64Bit): the 64-bit multiply
// emulated with one vpmulld (two uops and about 10 cycles' latency on
// Intel's cores) and one vpmuludq, or with three vpmuludq, and how many keys
// a step of the pipeline hashes in scalar code beside each vector ("AVX2
// 64-bit multiply (mul64)", "Fixed-width key hashing per target").
enum class Avx2U64Hash {
  kMulldOneScalarKey,    // AMD: won on the Zen 5 (AVX2 pinned) and Zen 3 guests
  kMuludqTwoScalarKeys,  // Intel: hashing 1.23x, HLL add 1.13x on the Intel guest
};
inline Avx2U64Hash avx2_u64_hash() {
  return vendor_forms() == VendorForms::kIntel ? Avx2U64Hash::kMuludqTwoScalarKeys
                                               : Avx2U64Hash::kMulldOneScalarKey;
}

// How many 16-byte strings each step of the AVX2 strings pipeline
// (hash_keys-inl.h) hashes in scalar code beside its vector of four ("Scalar
// 16-byte strings beside the AVX2 pipeline"). Each form's value is that count
// (scalar_keys(), which the pipeline's template argument takes).
enum class Avx2String16Hash : unsigned {
  kOneScalarKey = 1,   // AMD: hashing 1.14x, HLL add 1.17x against two on the Zen 4 guest (AVX2 pinned)
  kTwoScalarKeys = 2,  // Intel: hashing 1.05x against one, 1.11x against none on the Intel guest
};
constexpr std::size_t scalar_keys(Avx2String16Hash form) { return static_cast<std::size_t>(form); }
inline Avx2String16Hash avx2_string16_hash() {
  return vendor_forms() == VendorForms::kIntel ? Avx2String16Hash::kTwoScalarKeys
                                               : Avx2String16Hash::kOneScalarKey;
}

}  // namespace probkit::cpu
