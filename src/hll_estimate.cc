// Ertl, "New cardinality estimation algorithms for HyperLogLog sketches"
// (2017), the improved raw estimator, in the operation order Redis uses
// (hyperloglog.c: hllSigma, hllTau, hllCount) so that llround() of the result
// equals PFCOUNT. Computed on the host from the integer register histogram, so
// every backend yields the identical double.
#include <cmath>
#include <limits>
#include <string>

#include "probkit/error.hpp"
#include "probkit/hyperloglog.hpp"

namespace probkit {
namespace {

double sigma(double x) {
  if (x == 1.0) return std::numeric_limits<double>::infinity();
  double y = 1.0;
  double z = x;
  double z_prev;
  do {
    x *= x;
    z_prev = z;
    z += x * y;
    y += y;
  } while (z_prev != z);
  return z;
}

double tau(double x) {
  if (x == 0.0 || x == 1.0) return 0.0;
  double y = 1.0;
  double z = 1.0 - x;
  double z_prev;
  do {
    x = std::sqrt(x);
    z_prev = z;
    y *= 0.5;
    z -= std::pow(1.0 - x, 2) * y;
  } while (z_prev != z);
  return z / 3.0;
}

}  // namespace

double hll_estimate_from_histogram(std::span<const std::uint32_t> c, std::uint32_t p) {
  if (p < layout::kHllMinPrecision || p > layout::kHllMaxPrecision) {
    throw Error("hll estimate: p = " + std::to_string(p) + " is outside [4, 18]");
  }
  const std::uint32_t q = 64 - p;
  if (c.size() != q + 2) {
    throw Error("hll estimate: histogram has " + std::to_string(c.size()) + " entries, expected " +
                std::to_string(q + 2));
  }
  if (c.data() == nullptr) throw Error("hll estimate: histogram pointer is null");
  // Counts that do not add up to m make no sketch, and can drive tau() to the
  // square root of a negative number, whose NaN never converges.
  std::uint64_t registers = 0;
  for (std::uint32_t count : c) registers += count;
  if (registers != std::uint64_t{1} << p) {
    throw Error("hll estimate: histogram counts " + std::to_string(registers) + " registers, expected 2^" +
                std::to_string(p) + " = " + std::to_string(std::uint64_t{1} << p));
  }
  const double m = static_cast<double>(std::uint64_t{1} << p);
  double z = m * tau((m - c[q + 1]) / m);
  for (std::uint32_t j = q; j >= 1; --j) {
    z += c[j];
    z *= 0.5;
  }
  z += m * sigma(c[0] / m);
  constexpr double kAlphaInf = 0.721347520444481703680;  // 1 / (2 ln 2)
  return kAlphaInf * m * m / z;
}

}  // namespace probkit
