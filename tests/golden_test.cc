// Golden vectors (tests/vectors/golden.json, printed by the independent Python
// implementation tests/golden/make_golden.py): hashes, both Bloom layouts'
// bitsets, PKBF and PKHL bytes and HLL registers must match byte for byte.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "probkit/probkit.hpp"

namespace probkit {
namespace {

using Entry = std::map<std::string, std::string>;

// The file holds one flat JSON object per line with string or integer values.
Entry parse_line(const std::string& line) {
  Entry e;
  std::size_t pos = 0;
  while ((pos = line.find('"', pos)) != std::string::npos) {
    const std::size_t key_end = line.find('"', pos + 1);
    const std::string key = line.substr(pos + 1, key_end - pos - 1);
    std::size_t v = line.find(':', key_end) + 1;
    while (line[v] == ' ') ++v;
    std::size_t v_end;
    if (line[v] == '"') {
      v_end = line.find('"', v + 1);
      e[key] = line.substr(v + 1, v_end - v - 1);
      ++v_end;
    } else {
      v_end = line.find_first_of(",}", v);
      e[key] = line.substr(v, v_end - v);
    }
    pos = v_end;
  }
  return e;
}

const std::vector<Entry>& golden() {
  static const std::vector<Entry> entries = [] {
    std::ifstream in(PROBKIT_TEST_VECTORS "/golden.json");
    EXPECT_TRUE(in.good()) << "cannot open " PROBKIT_TEST_VECTORS "/golden.json";
    std::vector<Entry> out;
    std::string line;
    while (std::getline(in, line)) {
      if (line.find("{\"id\"") != std::string::npos) out.push_back(parse_line(line));
    }
    return out;
  }();
  return entries;
}

const Entry& by_id(const std::string& id) {
  for (const Entry& e : golden()) {
    if (e.at("id") == id) return e;
  }
  static const Entry none;
  ADD_FAILURE() << "no golden vector " << id;
  return none;
}

std::string hex(std::span<const std::uint8_t> b) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (std::uint8_t x : b) {
    s += digits[x >> 4];
    s += digits[x & 15];
  }
  return s;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::vector<std::uint8_t> from_hex(const std::string& s) {
  std::vector<std::uint8_t> out(s.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return out;
}

HashSpec spec_of(const Entry& e) {
  return {static_cast<HashKind>(std::stoi(e.at("kind"))), std::stoull(e.at("seed"))};
}

TEST(Golden, FileHasEveryKind) {
  std::map<std::string, int> count;
  for (const Entry& e : golden()) ++count[e.at("id")];
  EXPECT_EQ(count["hash"], 70);
  EXPECT_EQ(count["u32"], 8);
  EXPECT_EQ(count["u64"], 8);
}

TEST(Golden, Hashes) {
  int n = 0;
  for (const Entry& e : golden()) {
    const std::string& id = e.at("id");
    std::uint64_t got;
    if (id == "hash") {
      const std::vector<std::uint8_t> in = from_hex(e.at("input_hex"));
      got = hash(std::string_view(reinterpret_cast<const char*>(in.data()), in.size()), spec_of(e));
    } else if (id == "u32") {
      got = hash(static_cast<std::uint32_t>(std::stoull(e.at("key"))), spec_of(e));
    } else if (id == "u64") {
      got = hash(static_cast<std::uint64_t>(std::stoull(e.at("key"))), spec_of(e));
    } else {
      continue;
    }
    ++n;
    EXPECT_EQ(hex64(got), e.at("hash")) << id << " kind " << e.at("kind") << " seed " << e.at("seed") << " input "
                                        << (e.count("key") ? e.at("key") : e.at("input_hex"));
  }
  EXPECT_GT(n, 0);
}

std::vector<std::uint64_t> iota_u64(std::uint64_t n) {
  std::vector<std::uint64_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

std::vector<std::string> redis_keys(int n) {
  std::vector<std::string> s;
  for (int i = 0; i < n; ++i) s.push_back("key:" + std::to_string(i));
  return s;
}

void expect_filter(const BloomFilter& f, const std::string& id) {
  const Entry& e = by_id(id);
  EXPECT_EQ(hex(f.data()), e.at("bitset_hex")) << id;
  EXPECT_EQ(hex(f.serialize()), e.at("serialized_hex")) << id;
  // And the golden bytes load back to the same filter.
  EXPECT_EQ(BloomFilter::deserialize(from_hex(e.at("serialized_hex"))), f) << id;
}

TEST(Golden, Cacheline512Filter) {
  BloomFilter f(3, 7);
  f.add(iota_u64(100), Backend::Scalar);
  expect_filter(f, "cacheline512_nb3_k7_u64_0_99");
}

TEST(Golden, ParquetSbbfFilter) {
  BloomFilter f(5, 8, BloomLayout::ParquetSbbf);
  f.add(iota_u64(100), Backend::Scalar);
  expect_filter(f, "parquet_sbbf_nb5_u64_0_99");
}

TEST(Golden, Cacheline512SixteenProbesRedisHash) {
  const std::vector<std::string> s = redis_keys(50);
  const std::vector<std::string_view> keys(s.begin(), s.end());
  BloomFilter f(2, 16, BloomLayout::Cacheline512, HashSpec::redis());
  f.add(keys, Backend::Scalar);
  expect_filter(f, "cacheline512_nb2_k16_redis_key0_49");
}

void expect_sketch(const HyperLogLog& h, const std::string& id) {
  const Entry& e = by_id(id);
  EXPECT_EQ(hex(h.registers()), e.at("registers_hex")) << id;
  EXPECT_EQ(hex(h.serialize()), e.at("serialized_hex")) << id;
  EXPECT_EQ(HyperLogLog::deserialize(from_hex(e.at("serialized_hex"))), h) << id;
}

TEST(Golden, HllSketches) {
  HyperLogLog a(6);
  a.add(iota_u64(1000), Backend::Scalar);
  expect_sketch(a, "hll_p6_u64_0_999");

  const std::vector<std::string> s = redis_keys(100);
  const std::vector<std::string_view> keys(s.begin(), s.end());
  HyperLogLog b(6, HashSpec::redis());
  b.add(keys, Backend::Scalar);
  expect_sketch(b, "hll_p6_redis_key0_99");

  std::vector<std::uint32_t> u32(10000);
  std::iota(u32.begin(), u32.end(), 0u);
  HyperLogLog c(4, HashSpec{HashKind::Xxh64, 12345});
  c.add(u32, Backend::Scalar);
  expect_sketch(c, "hll_p4_u32_0_9999_seed12345");
}

}  // namespace
}  // namespace probkit
