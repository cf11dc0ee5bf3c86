// Which way the AVX-512 cacheline512 add builds a key's 16-word mask into a
// filter in the cache: chosen once per process from the CPU's vendor,
// because the two ways are bound by different parts of the core
// (docs/PERF-NOTES.md, "AVX-512 add: shifts, table masks and the other forms
// tried", has the figures).
#pragma once
#include <optional>

namespace probkit::cpu {

enum class AddMasks {
  // Each probe's part by a shift (vpsubd + vpsrlvd): vector ALU work, which
  // AMD's Zen 4 and 5 spread over four pipes and Intel's cores over two.
  kShifts,
  // Each probe's part loaded from a 32 KiB table of one-bit lines
  // (cacheline_bit_table.h): load-port work, and 32 KiB of L1.
  kBitTable,
};

// kBitTable on Intel CPUs, kShifts on the others (the override, if set).
AddMasks avx512_add_masks();

// "shifts" or "bit table", for benchmark context and test traces.
const char* add_masks_name(AddMasks masks);

// For tests, so that both ways run on any AVX-512 machine: until reset with
// nullopt, avx512_add_masks() returns `masks`.
void set_avx512_add_masks_for_testing(std::optional<AddMasks> masks);

}  // namespace probkit::cpu
