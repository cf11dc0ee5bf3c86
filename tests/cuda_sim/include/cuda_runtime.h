// Simulator stand-in for cuda_runtime.h: the API plus the typed cudaMalloc.
#pragma once
#include "cuda_runtime_api.h"

template <class T>
cudaError_t cudaMalloc(T** p, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(p), bytes);
}
