// A program whose globals call the library before main (tests/static_init/
// CMakeLists.txt says why that once crashed). Exits 0 when every call served
// and agreed with the scalar backend, made in main.
#include <cstdio>
#include <string>
#include <vector>

#include "probkit/probkit.hpp"

namespace {

std::vector<std::uint64_t> keys() {
  std::vector<std::uint64_t> v(100000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = i;
  return v;
}

struct BuiltBeforeMain {
  probkit::HyperLogLog sketch{14};
  probkit::BloomFilter filter{1024, 6};
  std::string served_by;
  BuiltBeforeMain() {
    sketch.add(keys());
    filter.add(keys());
    served_by = probkit::last_served().target;
  }
};

const BuiltBeforeMain g_built;

}  // namespace

int main() {
  probkit::HyperLogLog sketch(14);
  probkit::BloomFilter filter(1024, 6);
  sketch.add(keys(), probkit::Backend::Scalar);
  filter.add(keys(), probkit::Backend::Scalar);
  const bool same = sketch == g_built.sketch && filter == g_built.filter;
  std::printf("before main: served by '%s', estimate %.0f; %s the scalar backend's in main\n",
              g_built.served_by.c_str(), g_built.sketch.estimate(), same ? "equal to" : "NOT equal to");
  return same ? 0 : 1;
}
