// The simulated CUDA runtime: one "device" whose memory is tracked host
// memory, streams as FIFO queues executed lazily (only when the host waits),
// and events that order streams. Lazy execution makes ordering bugs visible:
// a host read of results before the stream is waited for sees stale bytes,
// and fresh allocations hold garbage, not zeros.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "cuda_runtime_api.h"

struct CUevent_st {
  CUstream_st* stream = nullptr;
  unsigned long long recorded = 0;
  unsigned long long completed = 0;
};

struct CUstream_st {
  struct Op {
    std::function<void()> work;
    CUevent_st* wait = nullptr;
    unsigned long long wait_for = 0;
    CUevent_st* records = nullptr;  // the event `work` records, if it is a cudaEventRecord
  };
  std::deque<Op> ops;
  bool blocking = true;
};

namespace {

std::recursive_mutex g_mutex;
CUstream_st g_legacy;                            // the null stream
std::set<CUstream_st*> g_streams{&g_legacy};     // every live stream
std::map<std::uintptr_t, std::size_t> g_device;  // simulated device allocations
std::map<std::uintptr_t, std::size_t> g_pinned;  // cudaMallocHost allocations
std::size_t g_pinned_bytes_allocated = 0;        // by every cudaMallocHost so far
// Events destroyed while queued work still named them (as the real runtime
// allows): kept until the process ends, so that the work finds them.
std::vector<std::unique_ptr<CUevent_st>> g_retired_events;
cudaError_t g_last = cudaSuccess;
// Eager mode (sim_set_eager_blocking_streams): work on the null stream and on
// blocking streams runs as soon as what it waits for is done, while
// non-blocking streams (the backend's copy stream) stay lazy. Another legal
// schedule, the one where a kernel launched without waiting for its input's
// copy reads the buffer before the copy lands.
bool g_eager = false;
constexpr unsigned char kGarbage = 0xA5;

CUstream_st* stream_of(cudaStream_t s) { return s != nullptr ? s : &g_legacy; }

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "cuda_sim: %s\n", what);
  std::abort();
}

bool in_range(const std::map<std::uintptr_t, std::size_t>& allocations, const void* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = allocations.upper_bound(a);
  if (it == allocations.begin()) return false;
  --it;
  return a >= it->first && a + bytes <= it->first + it->second;
}
bool in_device(const void* p, std::size_t bytes) { return in_range(g_device, p, bytes); }
// Like CUDA, any address inside a page-locked allocation reports as host memory.
bool in_pinned(const void* p) { return in_range(g_pinned, p, 1); }

void complete(CUevent_st* e, unsigned long long gen);

void run_one(CUstream_st* s) {
  CUstream_st::Op op = std::move(s->ops.front());
  s->ops.pop_front();
  if (op.wait != nullptr) complete(op.wait, op.wait_for);
  if (op.work) op.work();
}

void drain(CUstream_st* s) {
  while (!s->ops.empty()) run_one(s);
}

void complete(CUevent_st* e, unsigned long long gen) {
  while (e->completed < gen) {
    if (e->stream == nullptr || e->stream->ops.empty()) die("event waited for but never reached");
    run_one(e->stream);
  }
}

// What a legacy-stream synchronous call waits for: the null stream and every
// blocking stream (non-blocking streams are not synchronised by it).
void drain_legacy() {
  for (CUstream_st* s : g_streams) {
    if (s == &g_legacy || s->blocking) drain(s);
  }
}

void drain_all() {
  for (CUstream_st* s : g_streams) drain(s);
}

// After work was queued on s: in eager mode, runs s's ready work now.
void settle(CUstream_st* s) {
  if (!g_eager || !(s == &g_legacy || s->blocking)) return;
  while (!s->ops.empty()) {
    const CUstream_st::Op& op = s->ops.front();
    if (op.wait != nullptr && op.wait->completed < op.wait_for) return;
    run_one(s);
  }
}

void check_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  const bool dst_dev = in_device(dst, bytes), src_dev = in_device(src, bytes);
  switch (kind) {
    case cudaMemcpyHostToDevice:
      if (!dst_dev || src_dev) die("cudaMemcpyHostToDevice with a wrong side");
      break;
    case cudaMemcpyDeviceToHost:
      if (dst_dev || !src_dev) die("cudaMemcpyDeviceToHost with a wrong side");
      break;
    case cudaMemcpyDeviceToDevice:
      if (!dst_dev || !src_dev) die("cudaMemcpyDeviceToDevice with a host pointer");
      break;
    default: break;
  }
}

}  // namespace

namespace cuda_sim {
void enqueue(cudaStream_t s, std::function<void()> work) {
  std::lock_guard lock(g_mutex);
  stream_of(s)->ops.push_back({std::move(work), nullptr, 0});
  settle(stream_of(s));
}
void require_device(const void* p, std::size_t bytes, const char* what) {
  if (bytes == 0) return;
  std::lock_guard lock(g_mutex);
  if (!in_device(p, bytes)) {
    std::fprintf(stderr, "cuda_sim: kernel argument %s (%p, %zu bytes) is not device memory\n", what, p, bytes);
    std::abort();
  }
}
}  // namespace cuda_sim

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorNoDevice: return "cudaErrorNoDevice";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
  }
  return "cudaErrorUnknown";
}
const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    default: return "simulated error";
  }
}
cudaError_t cudaGetLastError() {
  std::lock_guard lock(g_mutex);
  const cudaError_t e = g_last;
  g_last = cudaSuccess;
  return e;
}
cudaError_t cudaGetDeviceCount(int* n) {
  *n = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int* d) {
  *d = 0;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int d) { return d == 0 ? cudaSuccess : cudaErrorInvalidDevice; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int d) {
  if (d != 0) return cudaErrorInvalidDevice;
  std::memset(p, 0, sizeof *p);
  std::strcpy(p->name, "Simulated GPU (host memory)");
  p->multiProcessorCount = 4;
  p->sharedMemPerBlockOptin = 227 * 1024;
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() {
  std::lock_guard lock(g_mutex);
  drain_all();
  return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  std::lock_guard lock(g_mutex);
  std::memset(a, 0, sizeof *a);
  a->device = -2;
  if (in_device(p, 1)) {
    a->type = cudaMemoryTypeDevice;
    a->device = 0;
  } else if (in_pinned(p)) {
    a->type = cudaMemoryTypeHost;
  } else {
    a->type = cudaMemoryTypeUnregistered;
  }
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, std::size_t bytes) {
  std::lock_guard lock(g_mutex);
  // A simulated device of 64 GiB: larger requests fail as on a real card.
  if (bytes > (std::size_t{64} << 30)) return g_last = cudaErrorMemoryAllocation;
  void* q = std::malloc(bytes == 0 ? 1 : bytes);
  if (q == nullptr) return g_last = cudaErrorMemoryAllocation;
  std::memset(q, kGarbage, bytes);
  g_device[reinterpret_cast<std::uintptr_t>(q)] = bytes == 0 ? 1 : bytes;
  *p = q;
  return cudaSuccess;
}
cudaError_t cudaFree(void* p) {
  std::lock_guard lock(g_mutex);
  drain_all();
  if (p == nullptr) return cudaSuccess;
  if (g_device.erase(reinterpret_cast<std::uintptr_t>(p)) == 0) die("cudaFree of a pointer cudaMalloc did not return");
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void** p, std::size_t bytes) {
  std::lock_guard lock(g_mutex);
  void* q = std::malloc(bytes == 0 ? 1 : bytes);
  if (q == nullptr) return g_last = cudaErrorMemoryAllocation;
  std::memset(q, kGarbage, bytes);
  g_pinned.emplace(reinterpret_cast<std::uintptr_t>(q), bytes == 0 ? 1 : bytes);
  g_pinned_bytes_allocated += bytes;
  *p = q;
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void* p) {
  std::lock_guard lock(g_mutex);
  drain_all();
  if (g_pinned.erase(reinterpret_cast<std::uintptr_t>(p)) == 0)
    die("cudaFreeHost of a pointer cudaMallocHost did not return");
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaMallocAsync(void** p, std::size_t bytes, cudaStream_t) { return cudaMalloc(p, bytes); }
cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
  std::lock_guard lock(g_mutex);
  if (g_device.count(reinterpret_cast<std::uintptr_t>(p)) == 0) die("cudaFreeAsync of a pointer not allocated");
  stream_of(s)->ops.push_back({[p] {
                                 g_device.erase(reinterpret_cast<std::uintptr_t>(p));
                                 std::free(p);
                               },
                               nullptr, 0});
  settle(stream_of(s));
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  std::lock_guard lock(g_mutex);
  drain_legacy();
  check_copy(dst, src, bytes, kind);
  if (bytes != 0) std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  std::lock_guard lock(g_mutex);
  check_copy(dst, src, bytes, kind);
  stream_of(s)->ops.push_back({[=] {
                                 if (bytes != 0) std::memmove(dst, src, bytes);
                               },
                               nullptr, 0});
  settle(stream_of(s));
  return cudaSuccess;
}
cudaError_t cudaMemset(void* p, int value, std::size_t bytes) {
  std::lock_guard lock(g_mutex);
  drain_legacy();
  if (!in_device(p, bytes)) die("cudaMemset of host memory");
  std::memset(p, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int value, std::size_t bytes, cudaStream_t s) {
  std::lock_guard lock(g_mutex);
  if (!in_device(p, bytes)) die("cudaMemsetAsync of host memory");
  stream_of(s)->ops.push_back({[=] { std::memset(p, value, bytes); }, nullptr, 0});
  settle(stream_of(s));
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamDefault); }
cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned flags) {
  std::lock_guard lock(g_mutex);
  auto* st = new CUstream_st;
  st->blocking = (flags & cudaStreamNonBlocking) == 0;
  g_streams.insert(st);
  *s = st;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  std::lock_guard lock(g_mutex);
  drain(s);  // the real one releases the stream once its work is done
  g_streams.erase(s);
  delete s;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  std::lock_guard lock(g_mutex);
  drain(stream_of(s));
  return cudaSuccess;
}
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned) {
  std::lock_guard lock(g_mutex);
  if (e->recorded != 0) stream_of(s)->ops.push_back({nullptr, e, e->recorded});
  settle(stream_of(s));
  return cudaSuccess;
}
cudaError_t cudaEventCreate(cudaEvent_t* e) { return cudaEventCreateWithFlags(e, cudaEventDefault); }
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  *e = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
  if (e == nullptr) return cudaErrorInvalidValue;
  std::lock_guard lock(g_mutex);
  for (CUstream_st* s : g_streams) {
    for (const CUstream_st::Op& op : s->ops) {
      if (op.wait == e || op.records == e) {
        g_retired_events.emplace_back(e);
        return cudaSuccess;
      }
    }
  }
  delete e;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  std::lock_guard lock(g_mutex);
  const unsigned long long gen = ++e->recorded;
  e->stream = stream_of(s);
  e->stream->ops.push_back({[e, gen] { e->completed = gen > e->completed ? gen : e->completed; }, nullptr, 0, e});
  settle(e->stream);
  return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  std::lock_guard lock(g_mutex);
  complete(e, e->recorded);
  return cudaSuccess;
}

// Not CUDA's: for tests/cuda_test.cc, the bytes every cudaMallocHost has
// asked for since the process began.
std::size_t sim_pinned_bytes_allocated() {
  std::lock_guard lock(g_mutex);
  return g_pinned_bytes_allocated;
}

// Not CUDA's: for tests/cuda_test.cc, eager mode on or off (g_eager).
void sim_set_eager_blocking_streams(bool on) {
  std::lock_guard lock(g_mutex);
  drain_all();
  g_eager = on;
}
