#pragma once
#include <stdexcept>
#include <string>

#include "probkit/export.hpp"

namespace probkit {

// Thrown at every API boundary for bad parameters, bad input bytes and
// unavailable backends. The message names the bad value and the valid range.
// An operation that throws leaves its object unchanged. The one exception:
// a CUDA error the device reports after a device-resident object's bulk call
// launched its first kernel (a device fault or a lost device, which most
// often end the process's CUDA context too) may leave part of the batch
// applied; every check of the call's own inputs comes before that launch.
class PROBKIT_API Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The memory an operation needs could not be allocated: the request itself
// may be valid (a serialized filter larger than this machine's memory is not
// a corrupt one). Thrown for a filter's or sketch's own memory, host or
// device: its storage, the per-thread copies of a bulk call, a whole
// serialized filter, the CUDA backend's device and pinned buffers. Small
// working buffers (a few MiB at most) may still throw std::bad_alloc.
class PROBKIT_API AllocationError : public Error {
 public:
  using Error::Error;
};

}  // namespace probkit
