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

#include "bloom_add-inl.h"
#include "bloom_add_keys-inl.h"
#include "bloom_add_prefetched-inl.h"
#include "bloom_common-inl.h"
#include "hash-inl.h"
#include "hash_keys-inl.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"
#include "vendor_forms.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// Sets one step's keys from their buffered offsets: add_cacheline_groups'
// per-key step, written out again here, since as a helper shared with it (in
// simd.cc) it moved code GCC emits for other kernels.
template <std::uint32_t kK, bool kFromTable>
HWY_INLINE void add_step(char* words, const AddGroupOffsets<kK>& now) {
  for (std::size_t l = 0; l < kAddGroup; ++l) {
    char* block = words + now.block_bytes[l];
    asm("" : "+r"(block));  // one register for the block's address
    or_key_bits<kK, kFromTable>(block, now.positions + l * kBufferedProbes<kK>);
  }
}

// u64 keys hashed and added in one loop, the masks from kCachelineBit or
// from shifts as masks_from_table says. The hash runs as the software
// pipeline of hash_fixed_pipelined (five stages of one multiply each; a step
// advances every vector in flight by a stage) with its vectors held in
// registers; each step buffers the offsets of the next step's keys from the
// hashes its last stage gives, and sets this step's keys as
// add_cacheline_groups does. The hashing's multiplies and shifts run beside
// the add's loads, and no hash goes through memory; the last count % 8 keys
// are hashed, then added.
// Against hashed, then added: k = 6 299.9 -> 370.2 M keys/s (Intel, 256 KiB,
// the table's masks); with the shifts' masks on Zen 5, k = 6 770 -> 778, k = 4
// 866 -> 951, k = 16 337 -> 333 (alike or faster).
// Hashing each step through all five stages at once, three steps ahead, lost
// past k = 8 (retirement waited on its chains of multiplies), prefetchw of
// the next step's blocks lost too, and on AVX2 such a loop ran slower (k = 6
// 228.2 -> 187.2) (docs/PERF-NOTES.md, "AVX-512 fused add (bloom_add_keys)";
// the AVX2 forms: "Bloom add: hashing and adding in one loop").
template <class Hash, std::uint32_t kK, bool kFromTable>
HWY_NOINLINE void add_hashing(const detail::BloomRef& f, const std::uint64_t* keys,
                              std::size_t count, HashSpec spec, std::uint64_t* scratch) {
  static_assert(Hash::kStages == 5);
  const std::size_t groups = count / kAddGroup;
  if (groups != 0) {
    const Hash hash(spec.seed);
    const auto load = [&](std::size_t g) {
      if (g >= groups) return hn::Zero(D64());  // past the last step: never used
      prefetch_stream(keys + g * kAddGroup);
      return load_keys(keys + g * kAddGroup);
    };
    char* const words = reinterpret_cast<char*>(f.words);
    const __m512i num_blocks = broadcast_block_count(f.num_blocks);
    AddGroupOffsets<kK> offsets[2];
    add_group_offsets_of<kK, kFromTable>(hash_vector(hash, load(0)).raw, num_blocks, offsets[0]);
    // At step g: s4 .. s1 hold the keys of steps g + 1 .. g + 4 after stages
    // 0-3 .. 0 (hash_fixed_pipelined's stages, its vectors kept in registers).
    V64 s4 = through_stages<4>(hash, load(1));
    V64 s3 = through_stages<3>(hash, load(2));
    V64 s2 = through_stages<2>(hash, load(3));
    V64 s1 = through_stages<1>(hash, load(4));
    for (std::size_t g = 0; g < groups; ++g) {
      const V64 next = hash.template stage<4>(s4);  // step g + 1's hashes
      if (g + 1 < groups)
        add_group_offsets_of<kK, kFromTable>(next.raw, num_blocks, offsets[~g & 1]);
      s4 = hash.template stage<3>(s3);
      s3 = hash.template stage<2>(s2);
      s2 = hash.template stage<1>(s1);
      s1 = hash.template stage<0>(load(g + 5));
      add_step<kK, kFromTable>(words, offsets[g & 1]);
    }
  }
  const std::size_t done = groups * kAddGroup;
  for (std::size_t i = done; i < count; ++i) scratch[i - done] = hash_one(spec, keys[i]);
  add_loop<false, BloomLayout::Cacheline512, kK, kFromTable>(f, scratch, count - done, {});
}

// Keys into a filter that misses the cache: the loop of
// bloom_add_prefetched-inl.h, every key added.
template <class Hash, std::uint32_t kK, BloomLayout kLayout = BloomLayout::Cacheline512>
HWY_NOINLINE void add_hashing_prefetched(const detail::BloomRef& f, const typename Hash::Key* keys,
                                         std::size_t count, HashSpec spec, std::uint64_t* scratch) {
  add_hashing_prefetched_body<Hash, kK, kLayout, false>(f, keys, count, spec, {}, scratch);
}

// The same loop for strings all 16 bytes long, back to back from p: the
// pipeline of hash_width16_pipelined_as (six stages: each string's two 8-byte
// lanes mixed apart, folded into h one after the other, h finished) with its
// vectors held in registers, each step buffering the next step's offsets from
// the hashes its last stage gives and setting this step's keys. Against hashed,
// then added: 221.1 -> 294.1 M keys/s (16-byte strings, k = 6, 256 KiB;
// Intel, the table's masks), 449 -> 582 (Zen 5, the shifts' masks)
// (docs/PERF-NOTES.md, "AVX-512 fused add: 16-byte strings").
template <bool kXxh, std::uint32_t kK, bool kFromTable>
HWY_NOINLINE void add_hashing_str16(const detail::BloomRef& f, const std::uint8_t* p,
                                    std::size_t count, HashSpec spec, std::uint64_t* scratch) {
  using Steps = Lane8Steps<kXxh>;
  const std::size_t groups = count / kAddGroup;
  if (groups != 0) {
    const D64 d;
    const V64 start = hn::Set(d, Steps::start(spec.seed, 16));
    const auto load = [&](std::size_t g) {
      if (g >= groups) return String16Halves{hn::Zero(d), hn::Zero(d)};  // never used
      const std::uint8_t* group = p + g * kAddGroup * 16;
      prefetch_stream(group);
      prefetch_stream(group + 64);
      return load_string16_halves(group);
    };
    char* const words = reinterpret_cast<char*>(f.words);
    const __m512i num_blocks = broadcast_block_count(f.num_blocks);
    AddGroupOffsets<kK> offsets[2];
    // At step g: h4 holds step g + 1's strings after stages 0-4, h3 step g +
    // 2's after 0-3, h2 and b2 step g + 3's after 0-2, a1 and b1 step g + 4's
    // after 0-1, a0 and b0 step g + 5's after stage 0.
    const auto mixed = [&](std::size_t g) {  // stages 0-1
      const String16Halves x = load(g);
      return String16Halves{Steps::mix1(Steps::mix0(x.first)), Steps::mix1(Steps::mix0(x.second))};
    };
    const auto folded = [&](std::size_t g) {  // stages 0-3
      const String16Halves x = mixed(g);
      return Steps::fold(Steps::fold(start, x.first), x.second);
    };
    add_group_offsets_of<kK, kFromTable>(Steps::finish(folded(0)).raw, num_blocks, offsets[0]);
    V64 h4 = Steps::finish0(folded(1));
    V64 h3 = folded(2);
    const String16Halves third = mixed(3);
    V64 h2 = Steps::fold(start, third.first), b2 = third.second;
    const String16Halves fourth = mixed(4);
    V64 a1 = fourth.first, b1 = fourth.second;
    const String16Halves fifth = load(5);
    V64 a0 = Steps::mix0(fifth.first), b0 = Steps::mix0(fifth.second);
    for (std::size_t g = 0; g < groups; ++g) {
      const V64 next = Steps::finish1(h4);  // step g + 1's hashes
      if (g + 1 < groups)
        add_group_offsets_of<kK, kFromTable>(next.raw, num_blocks, offsets[~g & 1]);
      advance_string16_stages<kXxh>(start, h4, h3, h2, b2, a1, b1, a0, b0);
      const String16Halves x = load(g + 6);
      a0 = Steps::mix0(x.first);
      b0 = Steps::mix0(x.second);
      add_step<kK, kFromTable>(words, offsets[g & 1]);
    }
  }
  const std::size_t done = groups * kAddGroup;
  for (std::size_t i = done; i < count; ++i) {
    scratch[i - done] = layout::hash_bytes(spec, p + 16 * i, 16);
  }
  add_loop<false, BloomLayout::Cacheline512, kK, kFromTable>(f, scratch, count - done, {});
}

using AddHashingLoop = void (*)(const detail::BloomRef&, const std::uint64_t*, std::size_t,
                                HashSpec, std::uint64_t*);
using AddHashingStr16Loop = void (*)(const detail::BloomRef&, const std::uint8_t*, std::size_t,
                                     HashSpec, std::uint64_t*);

template <class Hash, bool kFromTable, std::uint32_t... kKs>
constexpr std::array<AddHashingLoop, sizeof...(kKs)> add_hashing_loops(
    std::integer_sequence<std::uint32_t, kKs...>) {
  return {&add_hashing<Hash, kKs + 1, kFromTable>...};
}

template <class Hash, std::uint32_t... kKs>
constexpr std::array<void (*)(const detail::BloomRef&, const typename Hash::Key*, std::size_t, HashSpec,
                              std::uint64_t*),
                     sizeof...(kKs)>
add_hashing_prefetched_loops(std::integer_sequence<std::uint32_t, kKs...>) {
  return {&add_hashing_prefetched<Hash, kKs + 1>...};
}

template <bool kXxh, bool kFromTable, std::uint32_t... kKs>
constexpr std::array<AddHashingStr16Loop, sizeof...(kKs)> add_hashing_str16_loops(
    std::integer_sequence<std::uint32_t, kKs...>) {
  return {&add_hashing_str16<kXxh, kKs + 1, kFromTable>...};
}

// A chunk of strings: all 16 bytes long in one loop, others hashed
// (hash_keys), then added.
template <class Offset, bool kFromTable>
void add_strings(const detail::BloomRef& f, const detail::KeyBatch& keys, std::size_t begin,
                 std::size_t count, HashSpec spec, std::uint64_t* scratch) {
  using Ks = std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>;
  static constexpr auto kXxhLoops = add_hashing_str16_loops<true, kFromTable>(Ks());
  static constexpr auto kMurmurLoops = add_hashing_str16_loops<false, kFromTable>(Ks());
  const auto* offsets = static_cast<const Offset*>(keys.keys) + begin;
  if (count >= kAddGroup && window_width(keys, offsets, count) == 16) {
    const std::uint8_t* p = keys.data + offsets[0];
    (spec.kind == HashKind::Xxh64 ? kXxhLoops : kMurmurLoops)[f.k - 1](f, p, count, spec, scratch);
    return;
  }
  hash_keys(keys, begin, count, spec, scratch);
  bloom_add(f, scratch, count, {});
}

// A call's keys, the masks from kCachelineBit (kFromTable) or from shifts.
template <bool kFromTable>
void add_keys(const detail::BloomRef& f, const detail::KeyBatch& keys, std::size_t begin,
              std::size_t count, HashSpec spec, std::uint64_t* scratch) {
  using Ks = std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>;
  static constexpr auto kXxhLoops = add_hashing_loops<Xxh64U64, kFromTable>(Ks());
  static constexpr auto kMurmurLoops = add_hashing_loops<Murmur64AU64, kFromTable>(Ks());
  if (keys.kind == detail::KeyKind::Offsets32) {
    add_strings<std::int32_t, kFromTable>(f, keys, begin, count, spec, scratch);
  } else if (keys.kind == detail::KeyKind::Offsets64) {
    add_strings<std::int64_t, kFromTable>(f, keys, begin, count, spec, scratch);
  } else {
    const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
    (spec.kind == HashKind::Xxh64 ? kXxhLoops : kMurmurLoops)[f.k - 1](f, k, count, spec, scratch);
  }
}

bool bloom_add_keys(const detail::BloomRef& f, const detail::KeyBatch& keys, std::size_t begin,
                    std::size_t count, HashSpec spec, std::uint64_t* scratch) {
  const bool strings =
      keys.kind == detail::KeyKind::Offsets32 || keys.kind == detail::KeyKind::Offsets64;
  // Every cacheline512 filter in the cache takes these loops, its masks from
  // kCachelineBit or from shifts as masks_from_table (the CPU's vendor) says:
  // with either, hashing and adding in one loop was measured alike or faster.
  // One that misses the cache, of either layout, takes add_hashing_prefetched
  // for u64 keys and a batch of 16-byte strings; other strings into it are
  // hashed, then added (not measured in such a loop), as is every key into a
  // parquet_sbbf filter in the cache.
  if (keys.kind != detail::KeyKind::U64 && !strings) return false;
  if (prefetch_distance(f) != 0) {
    if (strings && !detail::is_string16_batch(keys)) return false;
    if (count == 0) return true;
    using Ks = std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>;
    const bool xxh = spec.kind == HashKind::Xxh64;
    if (f.layout == BloomLayout::ParquetSbbf) {
      constexpr std::uint32_t kK = layout::kSbbfK;
      constexpr BloomLayout kSbbf = BloomLayout::ParquetSbbf;
      if (strings) {
        (xxh ? &add_hashing_prefetched<String16Pipeline<true>, kK, kSbbf>
             : &add_hashing_prefetched<String16Pipeline<false>, kK, kSbbf>)(f, string_start(keys, begin), count, spec,
                                                                            scratch);
      } else {
        (xxh ? &add_hashing_prefetched<Xxh64U64, kK, kSbbf> : &add_hashing_prefetched<Murmur64AU64, kK, kSbbf>)(
            f, static_cast<const std::uint64_t*>(keys.keys) + begin, count, spec, scratch);
      }
      return true;
    }
    if (strings) {
      static constexpr auto kXxhLoops = add_hashing_prefetched_loops<String16Pipeline<true>>(Ks());
      static constexpr auto kMurmurLoops = add_hashing_prefetched_loops<String16Pipeline<false>>(Ks());
      (xxh ? kXxhLoops : kMurmurLoops)[f.k - 1](f, string_start(keys, begin), count, spec, scratch);
      return true;
    }
    static constexpr auto kXxhLoops = add_hashing_prefetched_loops<Xxh64U64>(Ks());
    static constexpr auto kMurmurLoops = add_hashing_prefetched_loops<Murmur64AU64>(Ks());
    const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
    (xxh ? kXxhLoops : kMurmurLoops)[f.k - 1](f, k, count, spec, scratch);
    return true;
  }
  if (f.layout != BloomLayout::Cacheline512) return false;
  if (count == 0) return true;
  if (masks_from_table(f)) {
    add_keys<true>(f, keys, begin, count, spec, scratch);
  } else {
    add_keys<false>(f, keys, begin, count, spec, scratch);
  }
  return true;
}

#endif  // HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
