// The memory a key batch reads, for the bulk calls that must not write there.
#pragma once
#include <cstddef>

#include "probkit/detail/key_batch.hpp"

namespace probkit::detail {

// Throws probkit::Error("<op>: the keys overlap <what>") where the batch's own
// memory (its values, or its offsets and string bytes, or its string_view
// array: not the bytes each view points to) shares a byte with [p, p + bytes).
// A call that writes memory it also reads as keys would give results that
// depend on the backend and the thread count (the kernels read keys ahead of
// their writes, and the workers read one another's shares).
void require_keys_apart(const KeyBatch& keys, const void* p, std::size_t bytes, const char* op, const char* what);

}  // namespace probkit::detail
