// CpuKernels::bloom_add_keys on AVX-512 (declared in bloom_add_keys-inl.h,
// which says why it has a translation unit of its own), compiled once per
// target like simd.cc; the other targets define nothing here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bloom_add_keys.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "add_masks.h"
#include "bloom_add-inl.h"
#include "bloom_add_keys-inl.h"
#include "bloom_common-inl.h"
#include "hash-inl.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// u64 keys hashed and added in one loop, where the masks come from
// kCachelineBit (masks_from_table): each step hashes the keys three steps
// ahead (one vector through every stage, hash_vector), buffers the offsets of
// the next step's keys from their hashes, held in a register, and sets this
// step's keys as add_cacheline_groups does. The hashing's multiplies and
// shifts run beside the add's loads, and no hash goes through memory; the
// last count % 8 keys are hashed, then added. Family 6 model 167 guest
// (Intel), AVX3_DL, BloomFilter::add, 256 KiB, M keys/s, medians of 5, five
// alternated rounds, hashed then added against this loop: u64 k = 6 320.2 ->
// 354.7, two threads 602.4 -> 680.0, k = 4 379.4 -> 391.9, k = 8 274.9 ->
// 303.5; the rows of code alike in both builds moved less than 1.5% (pre-
// hashed add 430.1 / 430.9, 16-byte strings add 219.0 / 219.1, u64 contains
// 629.4 / 630.8). A first run, six rounds: k = 6 317.8 -> 348.9, every round
// of this loop above every round of the other. The form tried before it,
// add_group_offsets a step behind the hash pipeline's stores (an AfterStep
// of hash_fixed_pipelined), had measured 303 -> 254. Not measured where the
// masks come from shifts (AMD). On AVX2 (same guest, AVX2 pinned, the words'
// read-modify-writes of bloom_add-inl.h) the same loop, each step's two
// vectors of hashes stored to a ring of four steps for add_group_offsets, ran
// slower: u64 k = 6 228.2 -> 187.2, two threads 442.5 -> 355.3, k = 4 285.7
// -> 243.3 (bloom_contains_avx2-inl.h, above kScalarKeysBesideTests, has the
// AVX2 forms tried before).
template <class Hash, std::uint32_t kK>
HWY_NOINLINE void add_hashing(const detail::BloomRef& f, const std::uint64_t* keys,
                              std::size_t count, HashSpec spec, std::uint64_t* scratch) {
  const std::size_t groups = count / kAddGroup;
  if (groups != 0) {
    const Hash hash(spec.seed);
    const auto hash_group = [&](std::size_t g) {
      if (g >= groups) return _mm512_setzero_si512();  // past the last step: never used
      prefetch_stream(keys + g * kAddGroup);
      return hash_vector(hash, load_keys(keys + g * kAddGroup)).raw;
    };
    char* const words = reinterpret_cast<char*>(f.words);
    const __m512i num_blocks = broadcast_block_count(f.num_blocks);
    AddGroupOffsets<kK> offsets[2];
    add_group_offsets_of<kK, true>(hash_group(0), num_blocks, offsets[0]);
    __m512i next = hash_group(1);   // the hashes of step g + 1
    __m512i after = hash_group(2);  // and of step g + 2
    for (std::size_t g = 0; g < groups; ++g) {
      if (g + 1 < groups) add_group_offsets_of<kK, true>(next, num_blocks, offsets[~g & 1]);
      next = after;
      after = hash_group(g + 3);
      const AddGroupOffsets<kK>& now = offsets[g & 1];
      for (std::size_t l = 0; l < kAddGroup; ++l) {
        char* block = words + now.block_bytes[l];
        asm("" : "+r"(block));  // one register for the block's address
        or_key_bits<kK, true>(block, now.positions + l * kBufferedProbes<kK>);
      }
    }
  }
  const std::size_t done = groups * kAddGroup;
  for (std::size_t i = done; i < count; ++i) scratch[i - done] = hash_one(spec, keys[i]);
  add_loop<false, BloomLayout::Cacheline512, kK, true>(f, scratch, count - done, {});
}

using AddHashingLoop = void (*)(const detail::BloomRef&, const std::uint64_t*, std::size_t,
                                HashSpec, std::uint64_t*);

template <class Hash, std::uint32_t... kKs>
constexpr std::array<AddHashingLoop, sizeof...(kKs)> add_hashing_loops(
    std::integer_sequence<std::uint32_t, kKs...>) {
  return {&add_hashing<Hash, kKs + 1>...};
}

// The largest k that add_hashing takes: where each key's probe positions
// fill half a vector multiply (kBufferedProbes). Past it, in a build that
// took every k (same guest, five rounds), the loop ran slower than hashing,
// then adding: k = 9 241.9 -> 247.4, k = 12 215.2 -> 179.2, k = 16 178.2 ->
// 159.6 (k = 8 280.8 -> 303.5 there).
inline constexpr std::uint32_t kAddHashingMaxK = 8;

bool bloom_add_keys(const detail::BloomRef& f, const detail::KeyBatch& keys, std::size_t begin,
                    std::size_t count, HashSpec spec, std::uint64_t* scratch) {
  if (keys.kind != detail::KeyKind::U64 || f.k > kAddHashingMaxK || !masks_from_table(f)) {
    return false;
  }
  using Ks = std::make_integer_sequence<std::uint32_t, kAddHashingMaxK>;
  static constexpr auto kXxhLoops = add_hashing_loops<Xxh64U64>(Ks());
  static constexpr auto kMurmurLoops = add_hashing_loops<Murmur64AU64>(Ks());
  if (count == 0) return true;
  const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
  (spec.kind == HashKind::Xxh64 ? kXxhLoops : kMurmurLoops)[f.k - 1](f, k, count, spec, scratch);
  return true;
}

#endif  // HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
