// The commands of the `probkit` program. Each takes the arguments after its
// name, returns the exit status, and throws UsageError / InputError /
// probkit::Error for bad input (main turns them into one stderr line, status 1).
#pragma once
#include <string>
#include <vector>

namespace probkit::cli {

using Args = std::vector<std::string>;

int run_distinct(const Args& args);
int run_hll(const Args& args);
int run_bloom(const Args& args);
int run_bench(const Args& args);

}  // namespace probkit::cli
