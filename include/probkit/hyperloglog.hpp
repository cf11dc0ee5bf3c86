// HyperLogLog with one-byte registers, Ertl's improved estimator, and Redis's
// string format (docs/FORMAT.md).
#pragma once
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "probkit/backend.hpp"
#include "probkit/detail/storage.hpp"
#include "probkit/export.hpp"
#include "probkit/keys.hpp"
#include "probkit/layout/hash.hpp"
#include "probkit/layout/hll.hpp"
#include "probkit/stream.hpp"

namespace probkit {

class PROBKIT_API HyperLogLog {
 public:
  // 2^p registers, p in [4, 18]. Default hash XXH64 seed 0; HashSpec::redis()
  // with p = 14 makes a sketch that is Redis's own.
  explicit HyperLogLog(std::uint32_t p, HashSpec hash = {});
  // p = 14, XXH64 seed 0. Not explicit, so that `return {};`, `= {}` and
  // aggregates holding a sketch initialise from {} (Clang refuses an explicit
  // default constructor there; GCC warns).
  HyperLogLog() : HyperLogLog(14) {}
  // p = 14 with the Redis hash.
  static HyperLogLog redis();

  // Copy assignment is all or nothing: if the copy throws (no memory, a
  // failed device copy), the target keeps its shape and contents. A moved-from
  // sketch holds no memory: it may only be assigned to or destroyed. Its other
  // operations throw Error, but for the accessors: its shape (precision,
  // num_registers, hash) stays, and registers() is empty (operator== finds it
  // equal only to another moved-from sketch of the same shape).
  HyperLogLog(const HyperLogLog& other);
  HyperLogLog& operator=(const HyperLogLog& other);
  HyperLogLog(HyperLogLog&&) noexcept = default;
  HyperLogLog& operator=(HyperLogLog&&) noexcept = default;
  ~HyperLogLog() = default;

  void add(const Keys& keys, Backend backend = Backend::Auto);
  // Stream-taking forms for device-resident sketches (a host sketch ignores
  // the stream). The plain form waits; the _async twin returns once the work
  // is queued (for host keys, once the keys have been consumed).
  void add(const Keys& keys, Stream stream, Backend backend = Backend::Auto);
  void add_async(const Keys& keys, Stream stream, Backend backend = Backend::Auto);

  // Residence, as for BloomFilter: to_device() moves the registers into the
  // memory of CUDA device `device`, to_host() moves them back; on failure
  // they throw Error and leave the sketch as it was. A device sketch's
  // histogram is computed on the device, its estimate on the host from it.
  void to_device(int device = 0);
  void to_host();
  bool on_device() const { return storage_.on_device(); }
  int device() const { return storage_.device(); }

  // Ertl's improved raw estimator over the register histogram; for Redis-mode
  // sketches llround(estimate()) equals Redis's PFCOUNT. A saturated sketch
  // (every register at its maximum rank, 65 - p) estimates +infinity: its
  // registers bound the cardinality from below only. Finite otherwise.
  // Beyond a few times 2^p keys it reads high on average by about
  // 1.08 / 2^p: +6.8% at p = 4 (a quarter of its standard error), +0.1% at
  // p = 10, nothing measurable at p = 14 (docs/ACCURACY.md).
  double estimate() const;
  // C[r] = number of registers holding r, r = 0 .. 65 - p.
  std::vector<std::uint32_t> histogram() const;

  // Register-wise max with a sketch of the same hash. A sketch of larger p is
  // folded down exactly; if `other` has smaller p, this sketch is folded down
  // to other's p first (as DataSketches unions do).
  void merge(const HyperLogLog& other);
  // A copy folded down to precision p (<= this precision).
  HyperLogLog fold(std::uint32_t p) const;
  void clear();
  friend PROBKIT_API bool operator==(const HyperLogLog& a, const HyperLogLog& b);

  std::uint32_t precision() const { return p_; }
  std::size_t num_registers() const { return std::size_t{1} << p_; }
  HashSpec hash() const { return hash_; }
  // Device memory for a device-resident sketch.
  std::span<const std::uint8_t> registers() const { return storage_.bytes(); }

  // Native format "PKHL" (docs/FORMAT.md).
  std::vector<std::uint8_t> serialize() const;
  static HyperLogLog deserialize(std::span<const std::uint8_t> bytes);

  // Redis strings: export dense (12304 bytes); import dense or sparse.
  // Export needs p = 14 and the Redis hash.
  std::vector<std::uint8_t> to_redis() const;
  static HyperLogLog from_redis(std::span<const std::uint8_t> bytes);

 private:
  void merge_resident(const HyperLogLog& other);

  std::uint32_t p_;
  HashSpec hash_;
  detail::Storage storage_;
};

// Ertl's improved estimator from a register histogram C[0 .. 65-p], whose
// counts add up to the 2^p registers (else Error); +infinity where every
// register is at 65 - p.
PROBKIT_API double hll_estimate_from_histogram(std::span<const std::uint32_t> histogram, std::uint32_t p);

}  // namespace probkit
