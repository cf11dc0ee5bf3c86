# Enables CUDA in the including folder with probkit's settings; included by
# cuda/ and by bench/gpu/ (language variables are per folder).
# PROBKIT_CUDA_ARCHITECTURES: what probkit's kernels are built for.
if(PROJECT_IS_TOP_LEVEL)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    # Ampere and Hopper by default; -DCMAKE_CUDA_ARCHITECTURES=90 (say) overrides.
    set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures probkit's kernels are built for")
  endif()
  set(PROBKIT_CUDA_ARCHITECTURES "${CMAKE_CUDA_ARCHITECTURES}")
else()
  # Built into another project, CMAKE_CUDA_ARCHITECTURES is the project's: a
  # cache entry set here would choose its own CUDA code's architectures too.
  if(DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(probkit_cuda_architectures_default "${CMAKE_CUDA_ARCHITECTURES}")
  else()
    set(probkit_cuda_architectures_default "80;90")
  endif()
  set(PROBKIT_CUDA_ARCHITECTURES "${probkit_cuda_architectures_default}" CACHE STRING
      "CUDA architectures probkit's kernels are built for")
endif()
enable_language(CUDA)
# CMake before 3.26 does not know nvcc's C++20 flag (nvcc 13 with g++ 12
# supports it): tell it, so that CUDA_STANDARD 20 works.
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
