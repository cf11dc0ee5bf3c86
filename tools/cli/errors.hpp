// The command line's error kinds: both end the program with status 1 and one
// line on stderr; they differ only in where the text comes from.
#pragma once
#include <stdexcept>
#include <string>

namespace probkit::cli {

// Bad arguments: unknown option, bad number, missing operand.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input data or an I/O failure: missing file, corrupt sketch, wrong kind.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace probkit::cli
