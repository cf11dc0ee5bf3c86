#pragma once
#include <stdexcept>
#include <string>

namespace probkit {

// Thrown at every API boundary for bad parameters, bad input bytes and
// unavailable backends. The message names the bad value and the valid range.
// An operation that throws leaves its object unchanged.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace probkit
