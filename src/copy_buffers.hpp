// Internal: the memory of the Bloom add's private filter copies (WorkerCopies
// in bloom_filter.cc), kept from one multi-threaded add to the next.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace probkit::detail {

// A multi-threaded add gives each extra worker a private copy of filters up
// to this size (about a core's L2); every buffer holds that much, so any
// copy fits in any buffer.
inline constexpr std::size_t kPrivateCopyMaxBytes = std::size_t{2} << 20;

// n buffers of kPrivateCopyMaxBytes, 64-byte aligned, their contents
// anything: kept ones first, the rest allocated. All or none: where one
// cannot be allocated it throws AllocationError, having kept the others.
std::vector<std::uint8_t*> take_copy_buffers(unsigned n);

// Hands buffers back (and clears the vector): kept for the next call, up to
// kept_copy_buffers_limit() of them, the rest (from calls at the same time,
// or with more threads than cores) freed.
void return_copy_buffers(std::vector<std::uint8_t*>& buffers) noexcept;

// The most buffers kept: what one call on every core takes (at least one).
unsigned kept_copy_buffers_limit();

// For tests: frees every kept buffer, so that the next call allocates.
void free_kept_copy_buffers_for_testing();

}  // namespace probkit::detail
