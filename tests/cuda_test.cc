// The CUDA backend against the scalar reference: filter bytes, query answers,
// HLL registers and estimates must be identical for every key kind, key
// memory (host or device), stream and batch size. Without a usable GPU the
// device tests skip and say why; the layout schedules the kernels use are
// still checked here on the CPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <vector>

#include "backend_matrix.hpp"
#include "cuda/block_words.hpp"
#include "cuda_backend.hpp"
#include "dispatch.hpp"
#include "key_columns.hpp"
#include "probkit/probkit.hpp"

#if defined(PROBKIT_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

#if defined(PROBKIT_CUDA_SIMULATOR)
// The bytes every cudaMallocHost has asked for so far (tests/cuda_sim/sim_runtime.cc).
std::size_t sim_pinned_bytes_allocated();
// Runs the null stream's and blocking streams' work as soon as it is ready
// (tests/cuda_sim/sim_runtime.cc).
void sim_set_eager_blocking_streams(bool on);
#endif

namespace {

using probkit::Backend;
using probkit::BloomFilter;
using probkit::BloomLayout;
using probkit::HyperLogLog;
using probkit::KeyMemory;
using probkit::Keys;
using probkit::test::InputCase;
using probkit::test::KeyColumn;
using probkit::test::KeyKind;
using probkit::test::ScopedEnv;
using probkit::test::key_kind_name;
using probkit::test::kAllKeyKinds;
using probkit::test::make_values;

// ---------------------------------------------------------------------------
// CPU: the per-element schedules the kernels use equal the reference layout.

TEST(CudaLayout, SaltTableIsTheReference) {
  for (std::uint32_t i = 0; i < 16; ++i) EXPECT_EQ(probkit::layout::bloom_salt(i), probkit::layout::kBloomSalt[i]);
  static_assert(probkit::layout::bloom_salt(0) == 0x47b6137bU);
  static_assert(probkit::layout::bloom_salt(15) == 0xab25f4c1U);
}

TEST(CudaLayout, ProbeTestEqualsMaskTest) {
  std::mt19937_64 rng(11);
  for (int t = 0; t < 20000; ++t) {
    const std::uint64_t h = rng();
    const std::uint32_t k = 1 + static_cast<std::uint32_t>(t % 16);
    std::uint32_t block[16];
    // Sparse and dense blocks, and blocks that hold exactly the key's mask.
    const probkit::layout::CachelineMask m = probkit::layout::cacheline_mask(h, k);
    for (std::uint32_t w = 0; w < 16; ++w) {
      const std::uint32_t noise = static_cast<std::uint32_t>(rng()) & static_cast<std::uint32_t>(rng());
      block[w] = (t % 3 == 0) ? m.word[w] : (t % 3 == 1) ? noise : (noise | static_cast<std::uint32_t>(rng()));
    }
    bool by_mask = true;
    for (std::uint32_t w = 0; w < 16; ++w) by_mask &= (block[w] & m.word[w]) == m.word[w];
    const std::uint32_t* p = block;
    ASSERT_EQ(probkit::layout::cacheline_test(h, k, p), by_mask) << "h=" << h << " k=" << k;
    // The kernel's form: the line in four 16-byte vectors (cuda/block_words.hpp).
    struct V4 {
      std::uint32_t x, y, z, w;
    };
    const V4 v0{block[0], block[1], block[2], block[3]}, v1{block[4], block[5], block[6], block[7]},
        v2{block[8], block[9], block[10], block[11]}, v3{block[12], block[13], block[14], block[15]};
    ASSERT_EQ(probkit::detail::cuda::line_contains(h, k, v0, v1, v2, v3), by_mask) << "h=" << h << " k=" << k;
  }
}

// The kernels' own schedules (cuda/block_words.hpp) against the layout.
TEST(CudaLayout, LineWordSelectsEveryWordOfTheLine) {
  struct V4 {
    std::uint32_t x, y, z, w;
  };
  std::mt19937_64 rng(13);
  for (int t = 0; t < 1000; ++t) {
    std::uint32_t words[16];
    for (auto& w : words) w = static_cast<std::uint32_t>(rng());
    const V4 v[4] = {{words[0], words[1], words[2], words[3]},
                     {words[4], words[5], words[6], words[7]},
                     {words[8], words[9], words[10], words[11]},
                     {words[12], words[13], words[14], words[15]}};
    for (std::uint32_t w = 0; w < 16; ++w) {
      ASSERT_EQ(probkit::detail::cuda::line_word(v[0], v[1], v[2], v[3], w), words[w]) << "w=" << w;
    }
  }
}

// A 64-bit atomicOr on word w of a block ORs 32-bit words 2w and 2w + 1 (the
// GPU, like the byte format, is little-endian): the 64-bit masks must be the
// 32-bit masks' bytes read as 64-bit words.
TEST(CudaLayout, SixtyFourBitMasksAreTheMasksBytes) {
  std::mt19937_64 rng(17);
  for (int t = 0; t < 20000; ++t) {
    const std::uint64_t h = rng();
    const std::uint32_t k = 1 + static_cast<std::uint32_t>(t % 16);
    const probkit::layout::CachelineMask m = probkit::layout::cacheline_mask(h, k);
    std::uint64_t want[8];
    std::memcpy(want, m.word, sizeof want);
    std::uint64_t mask64[8] = {};
    probkit::detail::cuda::cacheline_mask64(h, k, mask64);
    for (std::uint32_t w = 0; w < 8; ++w) ASSERT_EQ(mask64[w], want[w]) << "h=" << h << " k=" << k << " w=" << w;

    std::uint32_t sbbf[8];
    for (std::uint32_t w = 0; w < 8; ++w) sbbf[w] = probkit::layout::sbbf_word_bit(h, w);
    std::uint64_t sbbf_want[4];
    std::memcpy(sbbf_want, sbbf, sizeof sbbf_want);
    for (std::uint32_t p = 0; p < 4; ++p) ASSERT_EQ(probkit::detail::cuda::sbbf_pair_bits(h, p), sbbf_want[p]);
  }
}

// Host objects ignore the stream and run on the CPU, exactly as before.
TEST(CudaHost, StreamFormsOnHostObjectsMatchPlainForms) {
  std::vector<std::uint64_t> keys(5000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i * 0x9E3779B97F4A7C15ULL;
  BloomFilter a(257, 7), b(257, 7);
  a.add(keys, Backend::Scalar);
  b.add(keys, probkit::Stream{}, Backend::Scalar);
  EXPECT_EQ(a, b);
  b.add_async(keys, probkit::Stream{}, Backend::Scalar);
  EXPECT_EQ(a, b);
  std::vector<std::uint8_t> x(keys.size()), y(keys.size());
  a.contains(keys, x, Backend::Scalar);
  b.contains(keys, y, probkit::Stream{}, Backend::Scalar);
  EXPECT_EQ(x, y);
  std::uint64_t n = 0;
  b.count_async(keys, &n, probkit::Stream{}, Backend::Scalar);
  EXPECT_EQ(n, keys.size());
  EXPECT_FALSE(a.on_device());
  EXPECT_EQ(a.device(), -1);
  HyperLogLog h1(12), h2(12);
  h1.add(keys, Backend::Scalar);
  h2.add(keys, probkit::Stream{}, Backend::Scalar);
  EXPECT_EQ(h1, h2);
  EXPECT_THROW(a.add(keys, Backend::Cuda), probkit::Error);
}

TEST(CudaHost, AvailableBackendsListCudaOnlyWithADevice) {
  bool listed = false;
  for (Backend b : probkit::available_backends()) listed |= b == Backend::Cuda;
  EXPECT_EQ(listed, probkit::detail::cuda_device_count() > 0);
}

TEST(CudaHost, ToDeviceWithoutADeviceThrowsAndLeavesTheObject) {
  if (probkit::detail::cuda_device_count() > 0) GTEST_SKIP() << "a CUDA device is present";
  BloomFilter f(64, 6);
  const std::uint64_t key = 42;
  f.add(std::vector<std::uint64_t>{key});
  const BloomFilter before = f;
  try {
    f.to_device(0);
    FAIL() << "to_device succeeded without a device";
  } catch (const probkit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(f.on_device());
  EXPECT_EQ(f, before);
  HyperLogLog h(10);
  EXPECT_THROW(h.to_device(0), probkit::Error);
  EXPECT_FALSE(h.on_device());
}

// ---------------------------------------------------------------------------
// GPU: identity against the scalar reference.

#if defined(PROBKIT_WITH_CUDA)

std::string no_device_reason() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("no CUDA device: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
  }
  return n == 0 ? "no CUDA device: cudaGetDeviceCount() = 0" : "";
}

#define PROBKIT_REQUIRE_GPU()                                   \
  do {                                                          \
    const std::string why = no_device_reason();                 \
    if (!why.empty()) GTEST_SKIP() << why;                      \
  } while (0)

// Device memory that is not there is an AllocationError, as host memory is.
TEST(CudaHost, DeviceOutOfMemoryIsAnAllocationError) {
  PROBKIT_REQUIRE_GPU();
  // 1 TiB: more than any device has (the simulated one 64 GiB, an H200 141 GB).
  try {
    probkit::detail::cuda::free(probkit::detail::cuda::alloc(std::size_t{1} << 40, 0), 0);
    FAIL() << "1 TiB of device memory was allocated";
  } catch (const probkit::AllocationError& e) {
    EXPECT_NE(std::string(e.what()).find("cudaErrorMemoryAllocation"), std::string::npos) << e.what();
  }
  BloomFilter f(64, 6);
  f.to_device(0);  // and the next allocation works
  EXPECT_TRUE(f.on_device());
  // And the next bulk call, which asks CUDA for its last error after its
  // launches: the failed allocation's error was cleared when it was thrown,
  // not left to fail a later call that did its work.
  const std::vector<std::uint64_t> keys{1, 2, 3};
  f.add(Keys(keys));
  EXPECT_EQ(f.count(Keys(keys)), keys.size());
}

// cudaMalloc'd copy of a host vector, freed at scope end.
template <class T>
class DeviceVector {
 public:
  explicit DeviceVector(const std::vector<T>& host) : n_(host.size()) {
    if (n_ == 0) return;
    EXPECT_EQ(cudaMalloc(&ptr_, n_ * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(ptr_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  explicit DeviceVector(std::size_t n) : n_(n) {
    if (n_ != 0) {
      EXPECT_EQ(cudaMalloc(&ptr_, n_ * sizeof(T)), cudaSuccess);
    }
  }
  ~DeviceVector() {
    if (ptr_ != nullptr) cudaFree(ptr_);
  }
  DeviceVector(const DeviceVector&) = delete;
  DeviceVector& operator=(const DeviceVector&) = delete;
  std::span<T> span() { return {static_cast<T*>(ptr_), n_}; }
  std::span<const T> cspan() const { return {static_cast<const T*>(ptr_), n_}; }
  std::vector<T> to_host() const {
    std::vector<T> out(n_);
    if (n_ != 0) {
      EXPECT_EQ(cudaMemcpy(out.data(), ptr_, n_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return out;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t n_ = 0;
};

// n keys of every kind from one list of values (tests/key_columns.hpp), so
// that every kind holds the same keys; strings of 0 .. 40 bytes (both XXH64
// paths).
class KeySet {
 public:
  KeySet(std::size_t n, std::uint64_t seed) : n_(n) {
    const InputCase shape{"cuda", n, 0, 0, 40};
    const std::vector<std::uint64_t> values = make_values(shape, seed);
    for (KeyKind k : kAllKeyKinds) columns_.push_back(std::make_unique<KeyColumn>(k, values, shape));
  }
  const KeyColumn& column(KeyKind k) const { return *columns_[static_cast<std::size_t>(k)]; }
  Keys host(KeyKind k) const { return column(k).keys(); }
  std::size_t size() const { return n_; }

 private:
  std::size_t n_;
  std::vector<std::unique_ptr<KeyColumn>> columns_;  // indexed by KeyKind
};

// Key sets are reused across layouts and tests: generating 10^6 strings costs more than using them.
const KeySet& keyset(std::size_t n, std::uint64_t seed) {
  static std::map<std::pair<std::size_t, std::uint64_t>, std::unique_ptr<KeySet>> cache;
  auto& slot = cache[{n, seed}];
  if (!slot) slot = std::make_unique<KeySet>(n, seed);
  return *slot;
}

// Page-locked (cudaMallocHost) copy of a host vector, freed at scope end.
template <class T>
class PinnedVector {
 public:
  explicit PinnedVector(const std::vector<T>& host) : n_(host.size()) {
    if (n_ == 0) return;
    EXPECT_EQ(cudaMallocHost(&ptr_, n_ * sizeof(T)), cudaSuccess);
    std::memcpy(ptr_, host.data(), n_ * sizeof(T));
  }
  ~PinnedVector() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
  }
  PinnedVector(const PinnedVector&) = delete;
  PinnedVector& operator=(const PinnedVector&) = delete;
  std::span<const T> cspan() const { return {static_cast<const T*>(ptr_), n_}; }

 private:
  void* ptr_ = nullptr;
  std::size_t n_ = 0;
};

// The same keys copied into other memory by Copy<T> (DeviceVector: device
// memory; PinnedVector: page-locked host memory, whose fixed-width keys are
// then copied to the device in place, with no staging pack). String views
// have no copied form. Each call copies the arrays its batch needs; the
// copies live as long as this.
template <template <class> class Copy>
class CopiedKeySet {
 public:
  explicit CopiedKeySet(const KeySet& host) : host_(host) {}

  Keys keys(KeyKind k, KeyMemory where = KeyMemory::Detect) const {
    if (k == KeyKind::Views) ADD_FAILURE() << "no copied form for " << key_kind_name(k);
    return host_.column(k).keys_in(
        [this](const auto& v) {
          using T = typename std::decay_t<decltype(v)>::value_type;
          auto copy = std::make_shared<Copy<T>>(v);
          copies_.push_back(copy);
          return copy->cspan();
        },
        where);
  }

 private:
  const KeySet& host_;
  mutable std::vector<std::shared_ptr<void>> copies_;
};
using DeviceKeySet = CopiedKeySet<DeviceVector>;
using PinnedKeySet = CopiedKeySet<PinnedVector>;

// Not multiples of a warp or a CTA. The simulator (tests/cuda_sim) runs the
// kernels on the CPU with 4093-key staging chunks, so 100003 keys already
// cross 25 chunks there.
#if defined(PROBKIT_CUDA_SIMULATOR)
const std::size_t kSizes[] = {0, 1, 31, 33, 100003};
#else
const std::size_t kSizes[] = {0, 1, 31, 33, 1000003};
#endif

BloomFilter make_filter(BloomLayout layout, std::size_t n) {
  const std::uint64_t blocks = std::max<std::uint64_t>(1, n / 40 + 3);  // ~10 bits per key: collisions happen
  return layout == BloomLayout::ParquetSbbf ? BloomFilter(blocks, 8, layout) : BloomFilter(blocks, 7, layout);
}

// The filter built and queried on the device equals the scalar reference.
// Where the keys of an identity test are.
enum class KeySource { Host, PageLocked, Device };

void expect_bloom_identity(BloomLayout layout, KeyKind kind, std::size_t n, KeySource source, KeyMemory where) {
  SCOPED_TRACE(std::string(key_kind_name(kind)) + " n=" + std::to_string(n) +
               (layout == BloomLayout::ParquetSbbf ? " sbbf" : " cacheline512") +
               (source == KeySource::Device       ? " device keys"
                : source == KeySource::PageLocked ? " page-locked host keys"
                                                  : " host keys"));
  const KeySet& inserted = keyset(n, 1000 + n);
  const KeySet& queried = keyset(n + 17, 2000 + n);
  BloomFilter ref = make_filter(layout, n);
  ref.add(inserted.host(kind), Backend::Scalar);
  std::vector<std::uint8_t> ref_hits(queried.size());
  ref.contains(queried.host(kind), ref_hits, Backend::Scalar);
  const std::uint64_t ref_count = ref.count(queried.host(kind), Backend::Scalar);

  BloomFilter dev = make_filter(layout, n);
  dev.to_device(0);
  ASSERT_TRUE(dev.on_device());
  std::vector<std::uint8_t> hits(queried.size(), 7);
  std::uint64_t count = 0;
  if (source == KeySource::Device) {
    const DeviceKeySet di(inserted), dq(queried);
    dev.add(di.keys(kind, where));
    DeviceVector<std::uint8_t> dhits(hits.size());
    dev.contains(dq.keys(kind, where), dhits.span());
    hits = dhits.to_host();
    dev.contains(dq.keys(kind, where), hits);  // device keys, host output
    count = dev.count(dq.keys(kind, where));
  } else if (source == KeySource::PageLocked) {
    const PinnedKeySet pi(inserted), pq(queried);
    dev.add(pi.keys(kind, where));
    dev.contains(pq.keys(kind, where), hits);
    count = dev.count(pq.keys(kind, where));
  } else {
    dev.add(inserted.host(kind));
    dev.contains(queried.host(kind), hits);
    count = dev.count(queried.host(kind));
  }
  EXPECT_EQ(probkit::last_served().backend, Backend::Cuda);
  EXPECT_EQ(probkit::last_served().target.rfind("cuda:0", 0), 0u) << probkit::last_served().target;
  EXPECT_TRUE(dev == ref);
  EXPECT_EQ(hits, ref_hits);
  EXPECT_EQ(count, ref_count);
}

// Host keys: pageable, and page-locked (copied in place; string views have no
// page-locked copy).
TEST(CudaBloom, IdentityHostKeys) {
  PROBKIT_REQUIRE_GPU();
  for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    for (KeyKind kind : kAllKeyKinds) {
      for (std::size_t n : kSizes) {
        expect_bloom_identity(layout, kind, n, KeySource::Host, KeyMemory::Detect);
        if (kind != KeyKind::Views) expect_bloom_identity(layout, kind, n, KeySource::PageLocked, KeyMemory::Detect);
      }
    }
  }
}

TEST(CudaBloom, IdentityDeviceKeys) {
  PROBKIT_REQUIRE_GPU();
  for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    for (KeyKind kind : kAllKeyKinds) {
      if (kind == KeyKind::Views) continue;
      for (std::size_t n : kSizes) {
        expect_bloom_identity(layout, kind, n, KeySource::Device, KeyMemory::Detect);
        expect_bloom_identity(layout, kind, n, KeySource::Device, KeyMemory::Device);
      }
    }
  }
}

TEST(CudaBloom, EveryKOnDeviceMatchesScalar) {
  PROBKIT_REQUIRE_GPU();
  const KeySet keys(20000, 5);
  for (std::uint32_t k = 1; k <= 16; ++k) {
    BloomFilter ref(300, k), dev(300, k);
    ref.add(keys.host(KeyKind::U64), Backend::Scalar);
    dev.to_device();
    dev.add(keys.host(KeyKind::U64));
    EXPECT_TRUE(dev == ref) << "k=" << k;
    EXPECT_EQ(dev.count(keys.host(KeyKind::U32)), ref.count(keys.host(KeyKind::U32), Backend::Scalar)) << "k=" << k;
  }
}

TEST(CudaBloom, SeveralStreamsAndAsyncTwins) {
  PROBKIT_REQUIRE_GPU();
  const KeySet a(100003, 1), b(70001, 2), q(50000, 3);
  BloomFilter ref(5000, 9);
  ref.add(a.host(KeyKind::U64), Backend::Scalar);
  ref.add(b.host(KeyKind::Str64), Backend::Scalar);
  std::vector<std::uint8_t> ref_hits(q.size());
  ref.contains(q.host(KeyKind::U64), ref_hits, Backend::Scalar);

  cudaStream_t s1 = nullptr, s2 = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
  ASSERT_EQ(cudaStreamCreate(&s2), cudaSuccess);
  {
    BloomFilter dev(5000, 9);
    dev.to_device();
    const DeviceKeySet da(a);
    dev.add_async(da.keys(KeyKind::U64, KeyMemory::Device), s1);
    ASSERT_EQ(cudaStreamSynchronize(s1), cudaSuccess);
    dev.add_async(b.host(KeyKind::Str64), s2);  // host keys: staged on s2
    ASSERT_EQ(cudaStreamSynchronize(s2), cudaSuccess);
    EXPECT_TRUE(dev == ref);
    const DeviceKeySet dq(q);
    DeviceVector<std::uint8_t> out(q.size());
    dev.contains_async(dq.keys(KeyKind::U64, KeyMemory::Detect), out.span(), s1);
    DeviceVector<std::uint64_t> dcount(1);
    dev.count_async(dq.keys(KeyKind::U64, KeyMemory::Detect), dcount.span().data(), s2);
    ASSERT_EQ(cudaStreamSynchronize(s1), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(s2), cudaSuccess);
    EXPECT_EQ(out.to_host(), ref_hits);
    std::uint64_t ref_count = 0;
    for (std::uint8_t h : ref_hits) ref_count += h;
    EXPECT_EQ(dcount.to_host()[0], ref_count);
    // The sync form on a stream waits for it.
    std::vector<std::uint8_t> hits(q.size());
    dev.contains(q.host(KeyKind::U64), hits, s1);
    EXPECT_EQ(hits, ref_hits);
  }
  cudaStreamDestroy(s1);
  cudaStreamDestroy(s2);
}

TEST(CudaBloom, UnionIntersectionAndClearOnDevice) {
  PROBKIT_REQUIRE_GPU();
  const KeySet a(30000, 21), b(30000, 22);
  for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    BloomFilter ra = make_filter(layout, 30000), rb = make_filter(layout, 30000);
    ra.add(a.host(KeyKind::U64), Backend::Scalar);
    rb.add(b.host(KeyKind::U64), Backend::Scalar);
    BloomFilter da = ra, db = rb;
    da.to_device();
    db.to_device();
    BloomFilter ru = ra;
    ru.union_with(rb);
    BloomFilter du = da;
    EXPECT_TRUE(du.on_device());  // copies stay where they are
    du.union_with(db);
    EXPECT_TRUE(du == ru);
    BloomFilter mixed = da;
    mixed.union_with(rb);  // host operand
    EXPECT_TRUE(mixed == ru);
    BloomFilter host_side = ra;
    host_side.union_with(db);  // device operand, host result
    EXPECT_FALSE(host_side.on_device());
    EXPECT_TRUE(host_side == ru);
    BloomFilter ri = ra;
    ri.intersect_with(rb);
    BloomFilter di = da;
    di.intersect_with(db);
    EXPECT_TRUE(di == ri);
    EXPECT_DOUBLE_EQ(di.fill_ratio(), ri.fill_ratio());
    di.clear();
    EXPECT_TRUE(di == make_filter(layout, 30000));
  }
}

TEST(CudaBloom, ResidenceRoundTripAndSerializeFromDevice) {
  PROBKIT_REQUIRE_GPU();
  const KeySet keys(12345, 9);
  for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    BloomFilter f = make_filter(layout, 12345);
    f.add(keys.host(KeyKind::Str32), Backend::Scalar);
    const std::vector<std::uint8_t> bytes = f.serialize();
    f.to_device(0);
    EXPECT_EQ(f.device(), 0);
    EXPECT_EQ(f.serialize(), bytes);
    const BloomFilter copy = f;
    EXPECT_TRUE(copy.on_device());
    f.to_host();
    EXPECT_FALSE(f.on_device());
    EXPECT_EQ(f.serialize(), bytes);
    EXPECT_TRUE(BloomFilter::deserialize(copy.serialize()) == f);
  }
}

TEST(CudaBloom, CpuBackendsOnADeviceObjectAreErrors) {
  PROBKIT_REQUIRE_GPU();
  const KeySet keys(100, 4);
  BloomFilter f(64, 6);
  f.to_device();
  const BloomFilter before = f;
  EXPECT_THROW(f.add(keys.host(KeyKind::U64), Backend::Scalar), probkit::Error);
  EXPECT_THROW(f.add(keys.host(KeyKind::U64), Backend::Simd), probkit::Error);
  std::vector<std::uint8_t> out(100);
  EXPECT_THROW(f.contains(keys.host(KeyKind::U64), out, Backend::Scalar), probkit::Error);
  EXPECT_THROW((void)f.count(keys.host(KeyKind::U64), Backend::Scalar), probkit::Error);
  EXPECT_TRUE(f == before);
  HyperLogLog h(12);
  h.to_device();
  EXPECT_THROW(h.add(keys.host(KeyKind::U64), Backend::Scalar), probkit::Error);
  EXPECT_THROW(f.to_device(1 << 20), probkit::Error);  // no such device
  EXPECT_TRUE(f.on_device());
  try {  // a Backend cast from a bad integer is named as one, not told to call to_host()
    f.add(keys.host(KeyKind::U64), static_cast<Backend>(9));
    ADD_FAILURE() << "Backend 9 accepted";
  } catch (const probkit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("unknown backend 9 (valid: auto, scalar, simd, cuda)"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(f == before);
  // Keys in device memory for a host object: an error, not a crash.
  const DeviceKeySet dk(keys);
  BloomFilter host(64, 6);
  EXPECT_THROW(host.add(dk.keys(KeyKind::U64, KeyMemory::Device)), probkit::Error);
  EXPECT_THROW(host.add(dk.keys(KeyKind::Str64, KeyMemory::Detect)), probkit::Error);  // detected
  for (KeyKind k : {KeyKind::U32, KeyKind::U64, KeyKind::Prehashed}) {
    EXPECT_THROW(host.add(dk.keys(k, KeyMemory::Detect)), probkit::Error) << key_kind_name(k);
  }
  {  // offsets on the host, string bytes on the device
    const KeyColumn& strings = keys.column(KeyKind::Str32);
    const Keys host_keys = strings.keys();
    const auto& batch = host_keys.batch();
    const auto* offsets = static_cast<const std::int32_t*>(batch.keys);
    const DeviceVector<std::uint8_t> bytes(std::vector<std::uint8_t>(batch.data, batch.data + batch.data_size));
    const Keys split(
        probkit::StringBatch<std::int32_t>{std::span<const std::int32_t>(offsets, batch.n + 1), bytes.cspan()});
    EXPECT_THROW(host.add(split), probkit::Error);
  }
  std::vector<std::uint8_t> hits(100);
  EXPECT_THROW(host.contains(dk.keys(KeyKind::U32, KeyMemory::Device), hits), probkit::Error);
  EXPECT_THROW(host.contains(dk.keys(KeyKind::U64, KeyMemory::Detect), hits), probkit::Error);
  HyperLogLog hh(10);
  EXPECT_THROW(hh.add(dk.keys(KeyKind::U64, KeyMemory::Device)), probkit::Error);
  EXPECT_THROW(hh.add(dk.keys(KeyKind::U64, KeyMemory::Detect)), probkit::Error);
  EXPECT_TRUE(hh == HyperLogLog(10));
  EXPECT_TRUE(host == BloomFilter(64, 6));
}

// PROBKIT_BACKEND=cuda lets a device-resident object serve (as Auto does);
// only a CPU backend named there is refused.
TEST(CudaBloom, EnvironmentBackendCudaServesDeviceObjects) {
  PROBKIT_REQUIRE_GPU();
  const std::vector<std::uint64_t> keys{1, 2, 3};
  BloomFilter ref(64, 6), f(64, 6);
  ref.add(Keys(keys), Backend::Scalar);
  f.to_device();
  {
    const ScopedEnv env("PROBKIT_BACKEND", "cuda");
    try {
      f.add(Keys(keys));
    } catch (const probkit::Error& e) {
      ADD_FAILURE() << "PROBKIT_BACKEND=cuda refused a device object: " << e.what();
    }
  }
  {
    const ScopedEnv env("PROBKIT_BACKEND", "scalar");
    EXPECT_THROW(f.add(Keys(keys)), probkit::Error);
  }
  EXPECT_TRUE(f == ref);
}

// The device one past the last is named as one that does not exist, with the
// count found, as any other id past the end is (not as a failed cudaSetDevice).
TEST(CudaBloom, ToDeviceOnePastTheLastDeviceIsNamed) {
  PROBKIT_REQUIRE_GPU();
  int devices = 0;
  ASSERT_EQ(cudaGetDeviceCount(&devices), cudaSuccess);
  BloomFilter f(64, 6);
  try {
    f.to_device(devices);
    ADD_FAILURE() << "to_device(" << devices << ") accepted with " << devices << " device(s)";
  } catch (const probkit::Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not exist (" + std::to_string(devices) + " device(s) found)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(f.on_device());
}

// A host filter given an output in device memory: an error that writes
// nothing, where it wrote its answers on the CPU through the device pointer
// (a fault on a GPU; the simulator's device memory is host memory).
TEST(CudaBloom, DeviceOutputForAHostFilterIsAnError) {
  PROBKIT_REQUIRE_GPU();
  const KeySet keys(100, 4);
  BloomFilter host(64, 6);
  host.add(keys.host(KeyKind::U64));
  const BloomFilter before = host;
  DeviceVector<std::uint8_t> out(std::vector<std::uint8_t>(100, 7));
  DeviceVector<std::uint64_t> result(std::vector<std::uint64_t>{12345});
  const auto expect_output_error = [](const auto& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": a device output for a host filter was accepted";
    } catch (const probkit::Error& e) {
      EXPECT_NE(std::string(e.what()).find("the output is in device memory"), std::string::npos) << e.what();
    }
  };
  expect_output_error([&] { host.contains(keys.host(KeyKind::U64), out.span()); }, "contains");
  expect_output_error([&] { host.contains(keys.host(KeyKind::U64), out.span(), probkit::Stream{}); }, "contains(stream)");
  expect_output_error([&] { host.contains_async(keys.host(KeyKind::U64), out.span(), probkit::Stream{}); }, "contains_async");
  expect_output_error([&] { host.count_async(keys.host(KeyKind::U64), result.span().data(), probkit::Stream{}); },
                      "count_async");
  EXPECT_EQ(out.to_host(), std::vector<std::uint8_t>(100, 7));
  EXPECT_EQ(result.to_host(), std::vector<std::uint64_t>{12345});
  EXPECT_TRUE(host == before);
}

// A string batch with its offsets on one side and its bytes on the other is
// an error, whichever side holds which, for device and host objects alike,
// and changes nothing. (Offsets found in device memory used to make the batch
// a device one unchecked: its kernels then read the bytes from host memory.)
TEST(CudaBloom, StringsSplitBetweenHostAndDeviceAreErrors) {
  PROBKIT_REQUIRE_GPU();
  const KeySet keys(100, 4);
  const Keys host_keys = keys.host(KeyKind::Str32);
  const auto& batch = host_keys.batch();
  const std::span<const std::int32_t> host_offsets(static_cast<const std::int32_t*>(batch.keys), batch.n + 1);
  const std::span<const std::uint8_t> host_bytes(batch.data, batch.data_size);
  const DeviceVector<std::int32_t> device_offsets(std::vector<std::int32_t>(host_offsets.begin(), host_offsets.end()));
  const DeviceVector<std::uint8_t> device_bytes(std::vector<std::uint8_t>(host_bytes.begin(), host_bytes.end()));
  const Keys offsets_on_device(probkit::StringBatch<std::int32_t>{device_offsets.cspan(), host_bytes});
  const Keys bytes_on_device(probkit::StringBatch<std::int32_t>{host_offsets, device_bytes.cspan()});
  const auto expect_split_refused = [](const std::function<void()>& call, const char* what) {
    try {
      call();
      ADD_FAILURE() << what << ": accepted";
    } catch (const probkit::Error& e) {
      EXPECT_NE(std::string(e.what()).find("offsets and data must both be in host memory or both in device memory"),
                std::string::npos)
          << what << ": " << e.what();
    }
  };
  BloomFilter f(64, 6);
  f.to_device();
  const BloomFilter f_before = f;
  HyperLogLog h(12);
  h.to_device();
  const HyperLogLog h_before = h;
  std::vector<std::uint8_t> out(keys.size());
  for (const Keys* k : {&offsets_on_device, &bytes_on_device}) {
    const char* which = k == &offsets_on_device ? "offsets on the device" : "bytes on the device";
    SCOPED_TRACE(which);
    expect_split_refused([&] { f.add(*k); }, "add");
    expect_split_refused([&] { f.contains(*k, out); }, "contains");
    expect_split_refused([&] { (void)f.count(*k); }, "count");
    expect_split_refused([&] { h.add(*k); }, "hll add");
  }
  EXPECT_TRUE(f == f_before);
  EXPECT_TRUE(h == h_before);
  BloomFilter host(64, 6);
  EXPECT_THROW(host.add(offsets_on_device), probkit::Error);
  EXPECT_THROW(host.add(bytes_on_device), probkit::Error);
  EXPECT_THROW((void)host.count(offsets_on_device), probkit::Error);
  EXPECT_TRUE(host == BloomFilter(64, 6));
}

TEST(CudaBloom, BadDeviceOffsetsAreRejectedBeforeAnyWrite) {
  PROBKIT_REQUIRE_GPU();
  KeySet keys(1000, 8);
  BloomFilter f(64, 6);
  f.to_device();
  const BloomFilter before = f;
  const KeyColumn& strings64 = keys.column(KeyKind::Str64);
  std::vector<std::int64_t> bad = strings64.offsets64();
  bad[500] = bad[499] - 1;  // decreasing
  {
    const DeviceVector<std::int64_t> off(bad);
    const DeviceVector<std::uint8_t> data(strings64.bytes());
    try {
      f.add(Keys(probkit::StringBatch<std::int64_t>{off.cspan(), data.cspan()}, KeyMemory::Device));
      FAIL() << "decreasing device offsets were accepted";
    } catch (const probkit::Error& e) {
      EXPECT_NE(std::string(e.what()).find("offsets[500]"), std::string::npos) << e.what();
    }
  }
  const KeyColumn& strings32 = keys.column(KeyKind::Str32);
  std::vector<std::int32_t> beyond = strings32.offsets32();
  beyond.back() = static_cast<std::int32_t>(strings32.bytes().size() + 1);  // past the data
  {
    const DeviceVector<std::int32_t> off(beyond);
    const DeviceVector<std::uint8_t> data(strings32.bytes());
    EXPECT_THROW(f.add(Keys(probkit::StringBatch<std::int32_t>{off.cspan(), data.cspan()})), probkit::Error);
  }
  EXPECT_TRUE(f == before);
}

// A typed pointer off its width's alignment (undefined in C++) made the GPU
// fault with cudaErrorMisalignedAddress, which is sticky: every later CUDA
// call of the process failed, other objects' included. Such device keys and
// offsets are an Error before any launch, and nothing changes.
TEST(CudaBloom, MisalignedDeviceKeysAreErrorsThatChangeNothing) {
  PROBKIT_REQUIRE_GPU();
  BloomFilter f(64, 6);
  HyperLogLog h(14);
  f.add(std::vector<std::uint64_t>{1, 2, 3});
  h.add(std::vector<std::uint64_t>{1, 2, 3});
  f.to_device();
  h.to_device();
  const BloomFilter f_before = f;
  const HyperLogLog h_before = h;
  const DeviceVector<std::uint64_t> raw(std::vector<std::uint64_t>(65, 0x0101010101010101ULL));
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(raw.cspan().data());
  DeviceVector<std::uint8_t> hits(64);
  const auto expect_refused = [&](const Keys& keys, const char* what) {
    for (int op = 0; op < 3; ++op) {
      try {
        if (op == 0) f.add(keys);
        if (op == 1) f.contains(keys, hits.span().first(keys.size()));
        if (op == 2) h.add(keys);
        ADD_FAILURE() << what << ": misaligned device keys accepted (op " << op << ")";
      } catch (const probkit::Error& e) {
        EXPECT_NE(std::string(e.what()).find("aligned"), std::string::npos) << e.what();
      }
    }
  };
  const auto at = [&](std::size_t shift) { return bytes + shift; };
  expect_refused(Keys(std::span(reinterpret_cast<const std::uint64_t*>(at(4)), 64), KeyMemory::Device), "u64 +4");
  expect_refused(Keys(std::span(reinterpret_cast<const std::uint32_t*>(at(2)), 64), KeyMemory::Device), "u32 +2");
  expect_refused(
      Keys(probkit::Prehashed{std::span(reinterpret_cast<const std::uint64_t*>(at(1)), 64)}, KeyMemory::Device),
      "prehashed +1");
  // String offsets all zero (every key empty), so that only their alignment is wrong.
  const DeviceVector<std::uint64_t> zeros(std::vector<std::uint64_t>(65, 0));
  const auto* zbytes = reinterpret_cast<const std::uint8_t*>(zeros.cspan().data());
  const std::span<const std::uint8_t> data(bytes, 8);
  expect_refused(Keys(probkit::StringBatch<std::int64_t>{
                          std::span(reinterpret_cast<const std::int64_t*>(zbytes + 4), 64), data},
                      KeyMemory::Device),
                 "offsets64 +4");
  expect_refused(Keys(probkit::StringBatch<std::int32_t>{
                          std::span(reinterpret_cast<const std::int32_t*>(zbytes + 2), 64), data},
                      KeyMemory::Device),
                 "offsets32 +2");
  EXPECT_TRUE(f == f_before);
  EXPECT_TRUE(h == h_before);
  // Aligned, the same memory serves.
  f.add(Keys(std::span(reinterpret_cast<const std::uint64_t*>(at(8)), 64), KeyMemory::Device));
  EXPECT_FALSE(f == f_before);
}

// Strings longer than a staging chunk's byte budget (in the simulator) and
// batches whose bytes split unevenly across chunks.
TEST(CudaBloom, LongStringsFromHost) {
  PROBKIT_REQUIRE_GPU();
  std::vector<std::uint8_t> bytes;
  std::vector<std::int64_t> off{0};
  std::mt19937_64 rng(77);
  for (int i = 0; i < 300; ++i) {
    const std::size_t len = i % 50 == 7 ? 50000 + rng() % 1000 : rng() % 3000;
    for (std::size_t j = 0; j < len; ++j) bytes.push_back(static_cast<std::uint8_t>(rng()));
    off.push_back(static_cast<std::int64_t>(bytes.size()));
  }
  const Keys keys(probkit::StringBatch<std::int64_t>{off, bytes});
  BloomFilter ref(97, 11), dev(97, 11);
  ref.add(keys, Backend::Scalar);
  dev.to_device();
  dev.add(keys);
  EXPECT_TRUE(dev == ref);
  HyperLogLog href(8), hdev(8);
  href.add(keys, Backend::Scalar);
  hdev.to_device();
  hdev.add(keys);
  EXPECT_TRUE(hdev == href);
}

#if defined(PROBKIT_CUDA_SIMULATOR)
// A batch of one chunk is staged through one slot: a second was allocated
// too, as large (for one string longer than a chunk's byte budget, as large as
// the string), pinned and on the device, and never used. Simulator only: it
// counts the pinned bytes.
TEST(CudaBloom, OneChunkBatchStagesThroughOneSlot) {
  constexpr std::size_t kLength = 10 * PROBKIT_CUDA_CHUNK_BYTES;
  std::vector<std::uint8_t> bytes(kLength);
  std::mt19937_64 rng(78);
  for (std::uint8_t& b : bytes) b = static_cast<std::uint8_t>(rng());
  const std::vector<std::int64_t> off{0, static_cast<std::int64_t>(kLength)};
  const Keys one_string(probkit::StringBatch<std::int64_t>{off, bytes});
  std::vector<std::uint64_t> few(100);
  std::iota(few.begin(), few.end(), 5);
  BloomFilter ref(97, 11), dev(97, 11);
  ref.add(one_string, Backend::Scalar);
  ref.add(Keys(few), Backend::Scalar);
  dev.to_device();
  HyperLogLog href(8), hdev(8);
  href.add(one_string, Backend::Scalar);
  hdev.to_device();
  const auto pinned_by = [](const std::function<void()>& call) {
    const std::size_t before = sim_pinned_bytes_allocated();
    call();
    return sim_pinned_bytes_allocated() - before;
  };
  for (const std::size_t pinned : {pinned_by([&] { dev.add(one_string); }), pinned_by([&] { hdev.add(one_string); })}) {
    EXPECT_GE(pinned, kLength);
    EXPECT_LT(pinned, kLength + kLength / 2) << "a second slot of the string's size was pinned";
  }
  EXPECT_EQ(pinned_by([&] { dev.add(Keys(few)); }), few.size() * sizeof(std::uint64_t));
  EXPECT_TRUE(dev == ref);
  EXPECT_TRUE(hdev == href);
}

// A batch of exactly one chunk is one chunk too: one slot, not two.
TEST(CudaBloom, FullChunkBatchStagesThroughOneSlot) {
  std::vector<std::uint64_t> keys(PROBKIT_CUDA_CHUNK_KEYS);
  std::iota(keys.begin(), keys.end(), 11);
  BloomFilter ref(97, 11), dev(97, 11);
  ref.add(Keys(keys), Backend::Scalar);
  dev.to_device();
  const std::size_t before = sim_pinned_bytes_allocated();
  dev.add(Keys(keys));
  EXPECT_EQ(sim_pinned_bytes_allocated() - before, keys.size() * sizeof(std::uint64_t))
      << "a second slot was pinned for a batch of one chunk";
  EXPECT_TRUE(dev == ref);
}

// An output in device memory is written by the kernels where it is: nothing
// pinned for it (device keys: nothing pinned at all), where it was staged
// through pinned result buffers and copied to the device pointer on the host,
// which faults on a GPU (the simulator's device memory is host memory).
TEST(CudaBloom, DeviceOutputsAreNotStagedThroughPinnedMemory) {
  const KeySet& keys = keyset(100003, 1003);
  BloomFilter dev = make_filter(BloomLayout::Cacheline512, keys.size());
  dev.to_device();
  dev.add(keys.host(KeyKind::U64));
  const DeviceKeySet dk(keys);
  const Keys device_keys = dk.keys(KeyKind::U64);
  DeviceVector<std::uint8_t> out(keys.size());
  std::size_t before = sim_pinned_bytes_allocated();
  dev.contains(device_keys, out.span());
  EXPECT_EQ(sim_pinned_bytes_allocated() - before, 0u) << "device keys and output";
  before = sim_pinned_bytes_allocated();
  dev.contains(keys.host(KeyKind::U64), out.span());
  // The host keys' two staging slots, no result buffers.
  EXPECT_EQ(sim_pinned_bytes_allocated() - before, 2 * PROBKIT_CUDA_CHUNK_KEYS * sizeof(std::uint64_t))
      << "host keys, device output";
  EXPECT_EQ(out.to_host(), std::vector<std::uint8_t>(keys.size(), 1));
}

// Turns the simulator's eager mode on for a scope (and off on the way out, a
// failed expectation included).
class EagerStreams {
 public:
  EagerStreams() { sim_set_eager_blocking_streams(true); }
  ~EagerStreams() { sim_set_eager_blocking_streams(false); }
  EagerStreams(const EagerStreams&) = delete;
  EagerStreams& operator=(const EagerStreams&) = delete;
};

// Each staged chunk's kernel, on the caller's stream, waits for the chunk's
// copy on the copy stream. The lazy simulator runs every copy before the
// caller's stream drains, so a kernel launched without that wait still read
// its keys; run eagerly, the caller's stream (the null stream here) runs the
// kernel as soon as it is queued, before the lazy copy stream's copy landed.
TEST(CudaBloom, StagedKernelsWaitForTheirChunksCopies) {
  const KeySet& keys = keyset(100003, 1004);
  const KeySet& queried = keyset(100003 + 17, 2004);
  for (KeyKind kind : {KeyKind::U64, KeyKind::Str32, KeyKind::Views}) {
    SCOPED_TRACE(key_kind_name(kind));
    BloomFilter ref = make_filter(BloomLayout::Cacheline512, keys.size());
    ref.add(keys.host(kind), Backend::Scalar);
    std::vector<std::uint8_t> ref_hits(queried.size());
    ref.contains(queried.host(kind), ref_hits, Backend::Scalar);
    HyperLogLog href(12);
    href.add(keys.host(kind), Backend::Scalar);
    BloomFilter dev = make_filter(BloomLayout::Cacheline512, keys.size());
    dev.to_device();
    HyperLogLog hdev(12);
    hdev.to_device();
    std::vector<std::uint8_t> hits(queried.size(), 7);
    {
      const EagerStreams eager;
      dev.add(keys.host(kind));
      dev.contains(queried.host(kind), hits);
      hdev.add(keys.host(kind));
    }
    EXPECT_TRUE(dev == ref);
    EXPECT_EQ(hits, ref_hits);
    EXPECT_TRUE(hdev == href);
  }
}
#endif

// Host keys with the per-key output in device memory: the keys are staged
// chunk by chunk and each chunk's kernel writes its own slice of the output.
TEST(CudaBloom, HostKeysIntoADeviceOutput) {
  PROBKIT_REQUIRE_GPU();
  const KeySet& inserted = keyset(100003, 1005);
  const KeySet& queried = keyset(100003 + 17, 2005);
  for (KeyKind kind : {KeyKind::U64, KeyKind::Str64}) {
    SCOPED_TRACE(key_kind_name(kind));
    BloomFilter ref = make_filter(BloomLayout::ParquetSbbf, inserted.size());
    ref.add(inserted.host(kind), Backend::Scalar);
    std::vector<std::uint8_t> ref_hits(queried.size());
    ref.contains(queried.host(kind), ref_hits, Backend::Scalar);
    BloomFilter dev = make_filter(BloomLayout::ParquetSbbf, inserted.size());
    dev.to_device();
    dev.add(inserted.host(kind));
    DeviceVector<std::uint8_t> out(std::vector<std::uint8_t>(queried.size(), 7));
    dev.contains(queried.host(kind), out.span());
    EXPECT_EQ(out.to_host(), ref_hits);
  }
}

// ---------------------------------------------------------------------------

void expect_hll_identity(std::uint32_t p, KeyKind kind, std::size_t n, bool device_keys) {
  SCOPED_TRACE(std::string(key_kind_name(kind)) + " p=" + std::to_string(p) + " n=" + std::to_string(n) +
               (device_keys ? " device keys" : " host keys"));
  const KeySet& keys = keyset(n, 3000 + n);
  HyperLogLog ref(p);
  ref.add(keys.host(kind), Backend::Scalar);
  HyperLogLog dev(p);
  dev.to_device();
  if (device_keys) {
    const DeviceKeySet dk(keys);
    dev.add(dk.keys(kind, KeyMemory::Detect));
  } else {
    dev.add(keys.host(kind));
  }
  EXPECT_EQ(probkit::last_served().backend, Backend::Cuda);
  EXPECT_TRUE(dev == ref);
  if (!device_keys && kind != KeyKind::Views) {
    HyperLogLog from_pinned(p);
    from_pinned.to_device();
    const PinnedKeySet pinned(keys);
    from_pinned.add(pinned.keys(kind));
    EXPECT_TRUE(from_pinned == ref) << "page-locked host keys";
  }
  EXPECT_EQ(dev.histogram(), ref.histogram());
  EXPECT_EQ(dev.estimate(), ref.estimate());  // the identical double
}

TEST(CudaHll, Identity) {
  PROBKIT_REQUIRE_GPU();
  for (std::uint32_t p : {4u, 14u, 18u}) {
    for (KeyKind kind : kAllKeyKinds) {
      for (std::size_t n : kSizes) {
        expect_hll_identity(p, kind, n, false);
        if (kind != KeyKind::Views) expect_hll_identity(p, kind, n, true);
      }
    }
  }
}

// The shared-memory add kernel's dynamic shared memory limit is one per
// kernel for the whole process: one thread setting it for p = 10 between
// another's setting for p = 14 and its launch failed that launch. Two threads
// add to sketches of the two precisions at once, many times over.
TEST(CudaHll, ThreadsAddingAtDifferentPrecisionsAtOnce) {
  PROBKIT_REQUIRE_GPU();
  const KeySet keys(4096, 41);
  const Keys batch = keys.host(KeyKind::U64);
  std::vector<HyperLogLog> dev, ref;
  for (std::uint32_t p : {10u, 14u}) {
    ref.emplace_back(p);
    ref.back().add(batch, Backend::Scalar);
    dev.emplace_back(p);
    dev.back().to_device();
  }
  std::vector<std::string> errors(2);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int i = 0; i < 300; ++i) dev[t].add(batch);
      } catch (const std::exception& e) {
        errors[t] = e.what();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (std::size_t t = 0; t < 2; ++t) {
    EXPECT_EQ(errors[t], "") << "precision " << dev[t].precision();
    EXPECT_TRUE(dev[t] == ref[t]) << "precision " << dev[t].precision();
  }
}

TEST(CudaHll, RedisModeStreamsMergeAndSerialize) {
  PROBKIT_REQUIRE_GPU();
  const KeySet a(200001, 31), b(150001, 32);
  HyperLogLog ref = HyperLogLog::redis();
  ref.add(a.host(KeyKind::Views), Backend::Scalar);
  HyperLogLog ref_b = HyperLogLog::redis();
  ref_b.add(b.host(KeyKind::U64), Backend::Scalar);

  cudaStream_t s = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
  HyperLogLog dev = HyperLogLog::redis();
  dev.to_device();
  dev.add_async(a.host(KeyKind::Views), s);
  ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  EXPECT_TRUE(dev == ref);
  EXPECT_EQ(dev.to_redis(), ref.to_redis());
  EXPECT_EQ(dev.serialize(), ref.serialize());

  HyperLogLog dev_b = HyperLogLog::redis();
  dev_b.to_device();
  const DeviceKeySet db(b);
  dev_b.add(db.keys(KeyKind::U64, KeyMemory::Device), s);
  HyperLogLog merged = ref;
  merged.merge(ref_b);
  dev.merge(dev_b);
  EXPECT_TRUE(dev.on_device());
  EXPECT_TRUE(dev == merged);
  EXPECT_EQ(dev.estimate(), merged.estimate());
  // Folding merges and folds on a device sketch give the host's bytes.
  HyperLogLog small(10);
  small.to_device();
  HyperLogLog big(16);
  big.add(a.host(KeyKind::U64), Backend::Scalar);
  HyperLogLog small_ref(10);
  small_ref.merge(big);
  small.merge(big);
  EXPECT_TRUE(small == small_ref);
  EXPECT_TRUE(big.fold(12) == [&] { HyperLogLog d = big; d.to_device(); return d.fold(12); }());
  dev.to_host();
  EXPECT_TRUE(dev == merged);
  cudaStreamDestroy(s);
}

#else  // built without CUDA

TEST(CudaBackend, NotBuilt) {
  GTEST_SKIP() << "no CUDA device: probkit was built without the CUDA backend (PROBKIT_CUDA=OFF or no nvcc)";
}

#endif

}  // namespace
