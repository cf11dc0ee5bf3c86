// The bulk driver's persistent worker pool (src/worker_pool.cc): every worker
// index runs exactly once per call, calls from several user threads at once
// (which contend for the pool) all complete, and bulk results stay identical
// (scripts/test-sanitize.sh --thread --quick runs these under TSan).
#include "worker_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <numeric>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "probkit/probkit.hpp"

namespace {

TEST(WorkerPool, EveryIndexRunsOncePerCall) {
  for (unsigned workers : {1u, 2u, 3u, 8u, 2u, 5u, 1u, 8u}) {
    for (int call = 0; call < 50; ++call) {
      std::vector<std::atomic<int>> ran(workers);
      probkit::detail::run_workers(workers, [&](unsigned w) { ran[w].fetch_add(1); });
      for (unsigned w = 0; w < workers; ++w) ASSERT_EQ(ran[w].load(), 1) << "workers " << workers << " index " << w;
    }
  }
}

// Shares::kIndependent: where the pool's threads wake late (here: wait before
// they claim, delay_pool_claims_for_testing), the calling thread runs every
// share itself, once each, and returns without waiting for them. Before
// kIndependent the call waited for them and they ran shares 1-3.
TEST(WorkerPool, CallerRunsTheSharesOfThreadsThatWakeLate) {
  constexpr unsigned kWorkers = 4;
  for (int call = 0; call < 5; ++call) {
    std::vector<std::atomic<int>> ran(kWorkers);
    std::atomic<int> elsewhere{0};
    const std::thread::id caller = std::this_thread::get_id();
    const auto delay = std::chrono::seconds(2);
    const auto start = std::chrono::steady_clock::now();
    probkit::detail::delay_pool_claims_for_testing(delay);
    probkit::detail::run_workers(
        kWorkers,
        [&](unsigned w) {
          ran[w].fetch_add(1);
          if (std::this_thread::get_id() != caller) elsewhere.fetch_add(1);
        },
        probkit::detail::Shares::kIndependent);
    const auto took = std::chrono::steady_clock::now() - start;
    probkit::detail::delay_pool_claims_for_testing(std::chrono::seconds(0));
    for (unsigned w = 0; w < kWorkers; ++w) ASSERT_EQ(ran[w].load(), 1) << "call " << call << " share " << w;
    EXPECT_EQ(elsewhere.load(), 0) << "call " << call << ": a late pool thread ran a share";
    EXPECT_LT(took, delay) << "call " << call << ": the call waited for the late pool threads";
  }
}

// Independent calls, which a pool thread may wake too late for, mixed with
// concurrent ones, whose workers must all run at once: each of these waits
// until every worker of its call has arrived. A thread that slept through an
// independent call must neither run a share of it late nor miss the next call.
TEST(WorkerPool, ConcurrentCallsAfterIndependentOnesRunAllWorkersAtOnce) {
  for (int round = 0; round < 40; ++round) {
    const unsigned workers = 2 + round % 3;
    if (round % 4 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::vector<std::atomic<int>> ran(workers);
    probkit::detail::run_workers(
        workers, [&](unsigned w) { ran[w].fetch_add(1); }, probkit::detail::Shares::kIndependent);
    for (unsigned w = 0; w < workers; ++w) ASSERT_EQ(ran[w].load(), 1) << "round " << round << " share " << w;
    std::atomic<unsigned> arrived{0};
    std::atomic<int> timed_out{0};
    probkit::detail::run_workers(workers, [&](unsigned) {
      arrived.fetch_add(1);
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (arrived.load() < workers) {
        if (std::chrono::steady_clock::now() > give_up) {
          timed_out.fetch_add(1);
          return;
        }
        std::this_thread::yield();
      }
    });
    ASSERT_EQ(timed_out.load(), 0) << "round " << round << ": the workers of a concurrent call did not all run";
  }
}

// The path of a nested call, or of a second caller while the pool is busy:
// where a thread fails to start, the call throws and no worker has run, not
// even those whose threads had started; where all start, each index runs once.
TEST(WorkerPool, NoWorkerRunsWhereAThreadFailsToStart) {
  for (unsigned fail_at : {0u, 1u, 3u, 99u}) {  // the starts before it succeed; 99: none fails
    std::vector<std::atomic<int>> ran(5);
    unsigned starts = 0;
    const probkit::detail::ThreadStarter start = [&](std::function<void()> body) {
      if (starts++ == fail_at) throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again));
      return std::jthread(std::move(body));
    };
    const auto run = [&] {
      probkit::detail::run_workers_on_new_threads(
          5, [&](unsigned w) { ran[w].fetch_add(1); }, start);
    };
    if (fail_at < 4) {
      try {
        run();
        ADD_FAILURE() << "failing start " << fail_at << ": no throw";
      } catch (const probkit::Error& e) {  // not the std::system_error, which the API does not throw
        EXPECT_NE(std::string(e.what()).find("cannot start the threads of a 5-worker call"), std::string::npos)
            << e.what();
      }
    } else {
      run();
    }
    for (unsigned w = 0; w < 5; ++w) {
      EXPECT_EQ(ran[w].load(), fail_at < 4 ? 0 : 1) << "failing start " << fail_at << ", worker " << w;
    }
  }
}

TEST(WorkerPool, NestedAndConcurrentCallersComplete) {
  std::atomic<int> total{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int call = 0; call < 100; ++call) {
        probkit::detail::run_workers(3, [&](unsigned) {
          probkit::detail::run_workers(2, [&](unsigned) { total.fetch_add(1); });
        });
      }
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 100 * 3 * 2);
}

TEST(WorkerPool, ConcurrentBulkCallsMatchOneThread) {
  std::vector<std::uint64_t> keys(300000);
  std::iota(keys.begin(), keys.end(), 7);
  probkit::set_threads(1);
  probkit::HyperLogLog want_hll(14);
  want_hll.add(keys);
  probkit::BloomFilter want_small(1000, 7), want_large(40000, 7);  // private copies / owner partition
  want_small.add(keys);
  want_large.add(keys);
  probkit::set_threads(2);
  std::vector<std::thread> callers;
  std::atomic<int> mismatches{0};
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&] {
      for (int round = 0; round < 5; ++round) {
        probkit::HyperLogLog h(14);
        h.add(keys);
        probkit::BloomFilter s(1000, 7), l(40000, 7);
        s.add(keys);
        l.add(keys);
        if (!(h == want_hll) || !(s == want_small) || !(l == want_large)) mismatches.fetch_add(1);
        // Queries too: private copies of the small filter, the large one shared.
        for (const probkit::BloomFilter* f : {&want_small, &want_large}) {
          std::vector<std::uint8_t> hits(keys.size(), 0);
          f->contains(keys, hits);
          if (std::count(hits.begin(), hits.end(), 1) != static_cast<std::ptrdiff_t>(keys.size()) ||
              f->count(keys) != keys.size()) {
            mismatches.fetch_add(1);
          }
        }
      }
    });
  }
  for (auto& t : callers) t.join();
  probkit::set_threads(0);
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace

namespace {

// parallel_copy (the CUDA backend's staging pack): every byte arrives, none
// around the destination is touched, for sizes that do and do not split into
// whole pieces and cache lines, and worker counts above the pieces there are.
TEST(ParallelCopy, CopiesEveryByteAndNothingElse) {
  std::vector<std::uint8_t> src(3 * 1024 * 1024 + 77);
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (auto& b : src) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<std::uint8_t>(x);
  }
  constexpr std::size_t kGuard = 64;
  // Copies start at src[5]: src.size() - 5 bytes is all there is to copy.
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{4096}, std::size_t{65537},
                            src.size() - 6, src.size() - 5}) {
    for (unsigned workers : {1u, 2u, 3u, 8u, 64u}) {
      for (std::size_t min_piece : {std::size_t{1}, std::size_t{1000}, std::size_t{1} << 20}) {
        std::vector<std::uint8_t> dst(bytes + 2 * kGuard, 0xEE);
        probkit::detail::parallel_copy(dst.data() + kGuard, src.data() + 5, bytes, workers, min_piece);
        ASSERT_TRUE(
            std::equal(src.begin() + 5, src.begin() + 5 + static_cast<std::ptrdiff_t>(bytes), dst.begin() + kGuard))
            << bytes << " bytes, " << workers << " workers, pieces of " << min_piece;
        for (std::size_t i = 0; i < kGuard; ++i) {
          ASSERT_EQ(dst[i], 0xEE);
          ASSERT_EQ(dst[kGuard + bytes + i], 0xEE);
        }
      }
    }
  }
}

}  // namespace
