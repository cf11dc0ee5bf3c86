// A CUDA stream handle that the public headers can name without including
// cuda_runtime.h: cudaStream_t is `CUstream_st*`, so a cudaStream_t converts
// implicitly. The null stream is CUDA's default stream.
#pragma once

struct CUstream_st;

namespace probkit {

class Stream {
 public:
  constexpr Stream() = default;
  constexpr Stream(CUstream_st* s) : handle_(s) {}  // NOLINT: implicit from cudaStream_t
  constexpr CUstream_st* get() const { return handle_; }

 private:
  CUstream_st* handle_ = nullptr;
};

}  // namespace probkit
