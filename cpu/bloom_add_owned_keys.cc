// CpuKernels::bloom_add_owned_keys on AVX-512 (declared in
// bloom_add_keys-inl.h): bloom_add_keys' loop past the cache
// (bloom_add_prefetched-inl.h) adding only one block owner's keys, in a
// translation unit of its own (that header says why); compiled once per
// target like simd.cc, the other targets define nothing here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bloom_add_owned_keys.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "bloom_add_keys-inl.h"
#include "bloom_add_prefetched-inl.h"
#include "bloom_common-inl.h"
#include "hash-inl.h"
#include "hash_keys-inl.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// flatten: with the packing in its AfterStep, GCC left the hash pipeline's
// step out of line (its vectors through memory each step: 0.74 of the loop
// without packing, every hash owned, one thread); marking that step
// always_inline in hash-inl.h would change the code of every hash kernel.
template <class Hash, std::uint32_t kK, BloomLayout kLayout = BloomLayout::Cacheline512>
HWY_NOINLINE __attribute__((flatten)) void add_owned_hashing_prefetched(const detail::BloomRef& f,
                                                                        const typename Hash::Key* keys,
                                                                        std::size_t count, HashSpec spec,
                                                                        detail::HashRange own,
                                                                        std::uint64_t* scratch) {
  add_hashing_prefetched_body<Hash, kK, kLayout, true>(f, keys, count, spec, own, scratch);
}

template <class Hash, std::uint32_t... kKs>
constexpr std::array<void (*)(const detail::BloomRef&, const typename Hash::Key*, std::size_t, HashSpec,
                              detail::HashRange, std::uint64_t*),
                     sizeof...(kKs)>
add_owned_hashing_prefetched_loops(std::integer_sequence<std::uint32_t, kKs...>) {
  return {&add_owned_hashing_prefetched<Hash, kKs + 1>...};
}

// Past the cache only (the kernels prefetch for the filter), u64 keys and
// batches of 16-byte strings, as bloom_add_keys' loop there: in the cache two
// workers fill private copies, and other keys go through the exchange.
bool bloom_add_owned_keys(const detail::BloomRef& f, const detail::KeyBatch& keys, std::size_t begin,
                          std::size_t count, HashSpec spec, detail::HashRange own, std::uint64_t* scratch) {
  const bool strings = detail::is_string16_batch(keys);
  if (prefetch_distance(f) == 0 || (keys.kind != detail::KeyKind::U64 && !strings)) return false;
  if (count == 0) return true;
  using Ks = std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>;
  const bool xxh = spec.kind == HashKind::Xxh64;
  const auto u64 = [&] { return static_cast<const std::uint64_t*>(keys.keys) + begin; };
  if (f.layout == BloomLayout::ParquetSbbf) {
    constexpr std::uint32_t kK = layout::kSbbfK;
    constexpr BloomLayout kSbbf = BloomLayout::ParquetSbbf;
    if (strings) {
      (xxh ? &add_owned_hashing_prefetched<String16Pipeline<true>, kK, kSbbf>
           : &add_owned_hashing_prefetched<String16Pipeline<false>, kK, kSbbf>)(f, string_start(keys, begin),
                                                                                count, spec, own, scratch);
    } else {
      (xxh ? &add_owned_hashing_prefetched<Xxh64U64, kK, kSbbf>
           : &add_owned_hashing_prefetched<Murmur64AU64, kK, kSbbf>)(f, u64(), count, spec, own, scratch);
    }
    return true;
  }
  if (strings) {
    static constexpr auto kXxhLoops = add_owned_hashing_prefetched_loops<String16Pipeline<true>>(Ks());
    static constexpr auto kMurmurLoops = add_owned_hashing_prefetched_loops<String16Pipeline<false>>(Ks());
    (xxh ? kXxhLoops : kMurmurLoops)[f.k - 1](f, string_start(keys, begin), count, spec, own, scratch);
    return true;
  }
  static constexpr auto kXxhLoops = add_owned_hashing_prefetched_loops<Xxh64U64>(Ks());
  static constexpr auto kMurmurLoops = add_owned_hashing_prefetched_loops<Murmur64AU64>(Ks());
  (xxh ? kXxhLoops : kMurmurLoops)[f.k - 1](f, u64(), count, spec, own, scratch);
  return true;
}

#endif  // HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
