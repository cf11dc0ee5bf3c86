#include "probkit/hyperloglog.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <vector>

#include "bulk.hpp"
#include "bytes.hpp"
#include "copy_buffers.hpp"
#include "cuda_backend.hpp"
#include "dispatch.hpp"
#include "key_ranges.hpp"
#include "probkit/error.hpp"

namespace probkit {
namespace {

void validate(std::uint32_t p, HashSpec hash, const char* where) {
  if (p < layout::kHllMinPrecision || p > layout::kHllMaxPrecision) {
    throw Error(std::string(where) + ": precision p = " + std::to_string(p) + " is outside [4, 18]");
  }
  if (hash.kind != HashKind::Xxh64 && hash.kind != HashKind::Murmur64A) {
    throw Error(std::string(where) + ": unknown hash kind " + std::to_string(static_cast<int>(hash.kind)) +
                " (valid: 1 = xxh64, 2 = murmur64a)");
  }
}

void max_into(std::uint8_t* dst, const std::uint8_t* src, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) dst[i] = std::max(dst[i], src[i]);
}

// The smallest register (m is a power of two >= 16). Sixteen running minima,
// so that the compiler's SSE2 pminub does it at 16 registers per step.
std::uint8_t min_register(const std::uint8_t* r, std::size_t m) {
  std::uint8_t lane[16];
  for (auto& x : lane) x = 0xFF;
  for (std::size_t i = 0; i < m; i += 16) {
    for (std::size_t j = 0; j < 16; ++j) lane[j] = std::min(lane[j], r[i + j]);
  }
  std::uint8_t lo = 0xFF;
  for (std::uint8_t x : lane) lo = std::min(lo, x);
  return lo;
}

// One worker's floor: the smallest of its registers when it last looked.
// Registers only grow, so that is a floor for every key it adds later.
struct alignas(64) WorkerFloor {
  std::uint8_t floor = 0;
  std::size_t keys_since_scan = 0;
};

// Each worker rescans its registers after this many keys per register it
// adds: a large add into a young sketch screens too once the registers have
// grown (the smallest leaves 0 after about m ln m keys, and each step up takes
// about twice as many again). A scan of m bytes (16 per step) per 4m keys
// costs about a cycle per 64 keys. Fresh p = 14 sketch, one add of 10^8 u64
// keys, TSC cycles per key, medians of 5, two runs: 1 thread 3.11-3.39 against
// 4.56-4.58 with one scan per call, 2 threads 1.70-1.83 against 2.29-2.81.
constexpr std::size_t kFloorRescanKeysPerRegister = 4;

// Adds a worker's chunk of keys [s, s + c) into its registers, screened by
// its floor: the kernels skip keys whose rank cannot pass the floor without
// reading a register. With keys to hash and a backend with hash_screened, the
// hash kernel keeps only the hashes that pass the floor's screen (1 in
// 2^floor keys) as it computes them, and only those go on to the HLL kernel.
// Hashing then adding every key wrote the chunk's hashes and read them all
// back, and the HLL kernel's branch per vector of hashes mispredicted on each
// vector where one passed. XXH64 of u64 keys streamed from DRAM, p = 14,
// floor 7, 1024 keys per chunk, one pinned thread of the family 6 model 167
// Xeon guest, TSC cycles per key, best of 30, four runs: hashing alone
// 2.45-2.61, hash then add 3.14-3.29, screened hash then add 2.57-2.70. AVX2
// (which packs each step's passing hashes a step after computing them, or
// hashes then packs): cpu/hash-inl.h, kScreenInPipeline.
void add_chunk(const detail::CpuKernels& kernels, const detail::KeyBatch& kb, HashSpec hash, std::uint32_t p,
               std::uint8_t floor, std::uint8_t* registers, std::size_t s, std::size_t c, std::uint64_t* buf) {
  if (floor > 0 && kb.kind != detail::KeyKind::Prehashed && kernels.hash_screened != nullptr) {
    const std::uint64_t screen = layout::hll_floor_screen(p, floor);
    // Every hash kept passed the screen: the HLL kernel need not screen again.
    kernels.hll_add(registers, p, buf, kernels.hash_screened(kb, s, c, hash, screen, buf), 0);
  } else {
    kernels.hll_add(registers, p, detail::chunk_hashes(kernels, kb, s, c, hash, buf), c, floor);
  }
}

constexpr std::size_t kHeaderBytes = 16;
constexpr std::uint16_t kFormatVersion = 1;

}  // namespace

HyperLogLog::HyperLogLog(std::uint32_t p, HashSpec hash) : p_(p), hash_(hash) {
  validate(p, hash, "HyperLogLog");
  storage_ = detail::Storage(std::size_t{1} << p);
}

HyperLogLog HyperLogLog::redis() { return HyperLogLog(14, HashSpec::redis()); }

HyperLogLog::HyperLogLog(const HyperLogLog& other) = default;
// The copy is made before any member of *this changes: if it throws (no memory,
// a failed device copy), *this keeps its own precision and registers.
HyperLogLog& HyperLogLog::operator=(const HyperLogLog& other) {
  if (this != &other) *this = HyperLogLog(other);
  return *this;
}

void HyperLogLog::add(const Keys& keys, Backend backend) {
  detail::require_not_moved_from(storage_, "add", "sketch");
  if (on_device()) return add(keys, Stream{}, backend);
  detail::cuda::require_host_keys(keys.batch(), "add");
  detail::require_keys_apart(keys.batch(), storage_.data(), storage_.size(), "add", "the sketch's own registers");
  const detail::CpuChoice c = detail::resolve_cpu(backend);
  const detail::KeyBatch& kb = keys.batch();
  const unsigned workers = detail::workers_for(kb.n);
  const std::size_t m = num_registers();
  // Worker 0 updates the sketch; the others update private copies merged by
  // max afterwards (max is order-independent, so any thread count agrees).
  // The copies start as the sketch, not as zeros: from zeros nearly every
  // key raises a register until the copy warms up, and raises take the
  // kernels' slow path (when it went lane by lane, 2 threads ran at 0.6-0.9x
  // of one). Each worker copies a snapshot of the sketch (worker 0 writes
  // the sketch meanwhile) into its buffer of PrivateCopies at its first
  // keys, and the workers merge the copies, a range of registers each, where
  // the calling thread used to allocate, fill and merge every copy (16
  // threads, Emerald Rapids host, u64 keys: 4876 -> 8570 M keys/s).
  // (docs/PERF-NOTES.md, "HLL add: copies made and merged by the workers")
  detail::Storage snapshot;
  if (workers > 1) snapshot = storage_;
  detail::PrivateCopies copies(m, workers - 1);
  const auto registers_of = [&](unsigned w) {
    std::uint8_t* copy = copies.of(w, [&](std::uint8_t* fresh) { std::memcpy(fresh, snapshot.data(), m); });
    return copy != nullptr ? copy : storage_.data();
  };
  // Floors are worth their scans (m bytes) once the batch has as many keys.
  const bool scan = kb.n >= m;
  const std::size_t rescan_after = kFloorRescanKeysPerRegister * m;
  std::vector<WorkerFloor> floors(std::max(1u, workers), WorkerFloor{0, rescan_after});  // each scans first
  // kHashChunk keys per chunk: the registers (16 KiB at p = 14) and 8 KiB of
  // hashes share L1 without trouble, and the screened hash pays per call.
  // Zen 5 guest, AVX3_DL, one thread, medians of 5 repetitions, 5 alternated
  // rounds, u64 keys with XXH64: 1024 keys 2.04-2.80 G keys/s, 256 keys
  // 1.72-2.45 (0.70-0.99x against 0.59-0.66x the same-run hash alone).
  detail::for_each_key_chunk(kb.n, workers, [&](unsigned w, std::size_t first, std::size_t count, std::uint64_t* buf) {
    WorkerFloor& f = floors[w];
    std::uint8_t* registers = registers_of(w);
    if (scan && f.keys_since_scan >= rescan_after) {
      f.floor = min_register(registers, m);
      f.keys_since_scan = 0;
    }
    add_chunk(*c.kernels, kb, hash_, p_, f.floor, registers, first, count, buf);
    f.keys_since_scan += count;
  });
  copies.merge([&](std::size_t lo, std::size_t hi, const std::uint8_t* copy) {
    max_into(storage_.data() + lo, copy + lo, hi - lo);
  });
  detail::note_served(c.backend, c.target);
}

void HyperLogLog::add(const Keys& keys, Stream stream, Backend backend) {
  if (!on_device()) return add(keys, backend);
  detail::cuda::require_device_backend(backend);
  detail::require_keys_apart(keys.batch(), storage_.data(), storage_.size(), "add", "the sketch's own registers");
  detail::cuda::hll_add(storage_.data(), p_, keys.batch(), hash_, {device(), stream.get(), true});
  detail::note_served(Backend::Cuda, detail::cuda::device_label(device()));
}

void HyperLogLog::add_async(const Keys& keys, Stream stream, Backend backend) {
  if (!on_device()) return add(keys, backend);
  detail::cuda::require_device_backend(backend);
  detail::require_keys_apart(keys.batch(), storage_.data(), storage_.size(), "add", "the sketch's own registers");
  detail::cuda::hll_add(storage_.data(), p_, keys.batch(), hash_, {device(), stream.get(), false});
  detail::note_served(Backend::Cuda, detail::cuda::device_label(device()));
}

void HyperLogLog::to_device(int device) {
  detail::require_not_moved_from(storage_, "to_device", "sketch");
  if (storage_.device() == device) return;
  if (device < 0) throw Error("to_device: device " + std::to_string(device) + " is not a CUDA device id");
  storage_ = storage_.to_device(device);  // built fully before it replaces the registers
}

void HyperLogLog::to_host() {
  detail::require_not_moved_from(storage_, "to_host", "sketch");
  if (on_device()) storage_ = storage_.to_host();
}

std::vector<std::uint32_t> HyperLogLog::histogram() const {
  detail::require_not_moved_from(storage_, "histogram", "sketch");
  std::vector<std::uint32_t> c(66 - p_, 0);
  if (on_device()) {
    detail::cuda::hll_histogram(storage_.data(), p_, c.data(), {device(), nullptr, true});
    return c;
  }
  for (std::uint8_t r : registers()) ++c[r];
  return c;
}

double HyperLogLog::estimate() const {
  detail::require_not_moved_from(storage_, "estimate", "sketch");
  return hll_estimate_from_histogram(histogram(), p_);
}

HyperLogLog HyperLogLog::fold(std::uint32_t p) const {
  detail::require_not_moved_from(storage_, "fold", "sketch");
  if (p > p_ || p < layout::kHllMinPrecision) {
    throw Error("fold: target precision " + std::to_string(p) + " is outside [4, " + std::to_string(p_) + "]");
  }
  HyperLogLog out(p, hash_);
  const std::uint32_t shift = p_ - p;
  const std::uint32_t low_mask = (1u << p) - 1;
  detail::Storage scratch;  // a device sketch is folded on the host, the result moved back
  const std::uint8_t* src = storage_.host_view(scratch).data();
  std::uint8_t* dst = out.storage_.data();
  for (std::uint32_t j = 0; j < num_registers(); ++j) {
    const std::uint8_t r = src[j];
    if (r == 0) continue;
    // The index bits j >> p were rank bits at precision p: if any is set, the
    // rank at p comes from them; else it is r plus the `shift` zero bits.
    const std::uint32_t high = j >> p;
    const auto folded = static_cast<std::uint8_t>(high != 0 ? std::countr_zero(high) + 1 : r + shift);
    std::uint8_t& d = dst[j & low_mask];
    d = std::max(d, folded);
  }
  if (on_device()) out.to_device(device());
  return out;
}

void HyperLogLog::merge(const HyperLogLog& other) {
  detail::require_not_moved_from(storage_, "merge", "sketch");
  detail::require_not_moved_from(other.storage_, "merge", "other sketch");
  if (!(hash_ == other.hash_)) {
    throw Error("merge: sketches use different hashes (kind " + std::to_string(static_cast<int>(hash_.kind)) +
                " seed " + std::to_string(hash_.seed) + " vs kind " +
                std::to_string(static_cast<int>(other.hash_.kind)) + " seed " + std::to_string(other.hash_.seed) +
                ")");
  }
  if (on_device() || other.on_device()) return merge_resident(other);
  if (other.p_ == p_) {
    max_into(storage_.data(), other.storage_.data(), num_registers());
  } else if (other.p_ > p_) {
    const HyperLogLog folded = other.fold(p_);
    max_into(storage_.data(), folded.storage_.data(), num_registers());
  } else {
    HyperLogLog folded = fold(other.p_);  // built fully before this changes
    max_into(folded.storage_.data(), other.storage_.data(), folded.num_registers());
    *this = std::move(folded);
  }
}

// Either side on a device: the result stays where this sketch lives. Equal
// precisions merge by a device max; otherwise on host copies, moved back.
void HyperLogLog::merge_resident(const HyperLogLog& other) {
  if (on_device() && other.p_ == p_) {
    detail::Storage moved;
    const detail::Storage* theirs = &other.storage_;
    if (other.device() != device()) {
      moved = other.storage_.to_device(device());
      theirs = &moved;
    }
    detail::cuda::hll_max(storage_.data(), theirs->data(), num_registers(), {device(), nullptr, true});
    return;
  }
  HyperLogLog mine(*this);
  mine.to_host();
  HyperLogLog theirs(other);
  theirs.to_host();
  mine.merge(theirs);
  if (on_device()) mine.to_device(device());
  *this = std::move(mine);
}

void HyperLogLog::clear() {
  detail::require_not_moved_from(storage_, "clear", "sketch");
  if (on_device()) return storage_.zero();
  std::fill_n(storage_.data(), storage_.size(), std::uint8_t{0});
}

bool operator==(const HyperLogLog& a, const HyperLogLog& b) {
  if (!(a.p_ == b.p_ && a.hash_ == b.hash_)) return false;
  detail::Storage scratch_a, scratch_b;  // device-resident registers are compared on the host
  const auto x = a.storage_.host_view(scratch_a).bytes();
  const auto y = b.storage_.host_view(scratch_b).bytes();
  return std::equal(x.begin(), x.end(), y.begin(), y.end());  // a moved-from side holds no bytes
}

std::vector<std::uint8_t> HyperLogLog::serialize() const {
  detail::require_not_moved_from(storage_, "serialize", "sketch");
  detail::ByteWriter w(kHeaderBytes + storage_.size() + 8);
  w.bytes("PKHL", 4);
  w.le<std::uint16_t>(kFormatVersion);
  w.le<std::uint8_t>(static_cast<std::uint8_t>(p_));
  w.le<std::uint8_t>(static_cast<std::uint8_t>(hash_.kind));
  w.le<std::uint64_t>(hash_.seed);
  detail::Storage scratch;
  w.bytes(storage_.host_view(scratch).data(), storage_.size());
  return w.finish_with_checksum();
}

HyperLogLog HyperLogLog::deserialize(std::span<const std::uint8_t> bytes) {
  using detail::read_le;
  detail::check_native_prelude(bytes, "PKHL", kHeaderBytes, kFormatVersion, "HyperLogLog");
  const std::uint8_t* p = bytes.data();
  const std::uint32_t precision = p[6];
  const HashSpec hash{static_cast<HashKind>(p[7]), read_le<std::uint64_t>(p + 8)};
  validate(precision, hash, "PKHL");
  const std::size_t m = std::size_t{1} << precision;
  if (bytes.size() != kHeaderBytes + m + 8) {
    throw Error("PKHL: length " + std::to_string(bytes.size()) + " does not match p = " +
                std::to_string(precision) + " (expected " + std::to_string(kHeaderBytes + m + 8) + " bytes)");
  }
  detail::verify_checksum(bytes, "PKHL");
  const std::uint8_t max_rank = static_cast<std::uint8_t>(layout::hll_max_rank(precision));
  for (std::size_t j = 0; j < m; ++j) {
    if (p[kHeaderBytes + j] > max_rank) {
      throw Error("PKHL: register " + std::to_string(j) + " = " + std::to_string(p[kHeaderBytes + j]) +
                  " exceeds the maximum rank " + std::to_string(max_rank) + " for p = " + std::to_string(precision));
    }
  }
  HyperLogLog h(precision, hash);
  std::memcpy(h.storage_.data(), p + kHeaderBytes, m);
  return h;
}

}  // namespace probkit
