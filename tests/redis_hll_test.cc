// Redis HLL strings written by a real Redis 7.0.15 (tests/vectors/redis_hll.json,
// copied from shared/vectors): export, import and PFCOUNT must match exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "probkit/probkit.hpp"

namespace {

struct RedisVector {
  std::optional<std::uint64_t> n;  // key:0 .. key:n-1; absent for the PFMERGE entry
  std::uint64_t pfcount = 0;
  std::vector<std::uint8_t> stored;  // as Redis stored it (may be empty)
  std::vector<std::uint8_t> dense;
};

std::vector<std::uint8_t> from_hex(const std::string& hex) {
  std::vector<std::uint8_t> out(hex.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(std::stoul(hex.substr(2 * i, 2), nullptr, 16));
  return out;
}

// The file is flat JSON written by a script: one object per vector, string or
// integer values. A field lookup within each object's text is enough.
std::optional<std::string> field(const std::string& obj, const std::string& name) {
  const std::string key = "\"" + name + "\":";
  auto pos = obj.find(key);
  if (pos == std::string::npos) return std::nullopt;
  pos += key.size();
  while (obj[pos] == ' ') ++pos;
  if (obj[pos] == '"') {
    const auto end = obj.find('"', pos + 1);
    return obj.substr(pos + 1, end - pos - 1);
  }
  const auto end = obj.find_first_of(",\n}", pos);
  return obj.substr(pos, end - pos);
}

std::vector<RedisVector> load_vectors() {
  std::ifstream in(PROBKIT_TEST_VECTORS "/redis_hll.json");
  EXPECT_TRUE(in.good()) << "cannot open " PROBKIT_TEST_VECTORS "/redis_hll.json";
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  std::vector<RedisVector> out;
  auto pos = text.find("\"vectors\"");
  while ((pos = text.find('{', pos + 1)) != std::string::npos) {
    const auto end = text.find('}', pos);
    const std::string obj = text.substr(pos, end - pos);
    RedisVector v;
    if (auto n = field(obj, "n")) v.n = std::stoull(*n);
    v.pfcount = std::stoull(field(obj, "pfcount").value());
    if (auto s = field(obj, "stored_hex")) v.stored = from_hex(*s);
    v.dense = from_hex(field(obj, "dense_hex").value());
    out.push_back(std::move(v));
    pos = end;
  }
  return out;
}

probkit::HyperLogLog redis_sketch_of(std::uint64_t n) {
  std::vector<std::string> storage;
  for (std::uint64_t i = 0; i < n; ++i) storage.push_back("key:" + std::to_string(i));
  std::vector<std::string_view> keys(storage.begin(), storage.end());
  auto h = probkit::HyperLogLog::redis();
  h.add(keys);
  return h;
}

// Registers and header, ignoring the 8 cached-cardinality bytes.
void expect_same_dense(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
  ASSERT_EQ(a.size(), 12304u);
  ASSERT_EQ(b.size(), 12304u);
  EXPECT_TRUE(std::equal(a.begin(), a.begin() + 8, b.begin()));
  EXPECT_TRUE(std::equal(a.begin() + 16, a.end(), b.begin() + 16));
}

TEST(RedisHll, VectorsLoad) { EXPECT_EQ(load_vectors().size(), 5u); }

TEST(RedisHll, PfaddProducesRedisRegistersAndCount) {
  for (const auto& v : load_vectors()) {
    if (!v.n) continue;
    SCOPED_TRACE("n = " + std::to_string(*v.n));
    const auto h = redis_sketch_of(*v.n);
    expect_same_dense(h.to_redis(), v.dense);
    EXPECT_EQ(std::llround(h.estimate()), static_cast<long long>(v.pfcount));
  }
}

TEST(RedisHll, ImportsStoredAndDenseStrings) {
  for (const auto& v : load_vectors()) {
    const auto dense = probkit::HyperLogLog::from_redis(v.dense);
    EXPECT_EQ(std::llround(dense.estimate()), static_cast<long long>(v.pfcount));
    expect_same_dense(dense.to_redis(), v.dense);
    if (!v.stored.empty()) {
      const auto stored = probkit::HyperLogLog::from_redis(v.stored);
      EXPECT_EQ(stored, dense);
    }
  }
}

TEST(RedisHll, MergeMatchesPfmerge) {
  const auto vs = load_vectors();
  auto a = redis_sketch_of(1000);
  a.merge(redis_sketch_of(100000));
  const auto& merged = vs.back();
  ASSERT_FALSE(merged.n.has_value());
  expect_same_dense(a.to_redis(), merged.dense);
  EXPECT_EQ(std::llround(a.estimate()), static_cast<long long>(merged.pfcount));
}

TEST(RedisHll, ExportHeaderMarksCacheStale) {
  const auto bytes = redis_sketch_of(10).to_redis();
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 4), "HYLL");
  EXPECT_EQ(bytes[4], 0);
  EXPECT_EQ(bytes[15] & 0x80, 0x80);
}

}  // namespace
