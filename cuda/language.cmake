# Enables CUDA in the including folder with probkit's settings; included by
# cuda/ and by bench/gpu/ (language variables are per folder).
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # Ampere and Hopper by default; -DCMAKE_CUDA_ARCHITECTURES=90 (say) overrides.
  set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures probkit's kernels are built for")
endif()
enable_language(CUDA)
# CMake before 3.26 does not know nvcc's C++20 flag (nvcc 13 with g++ 12
# supports it): tell it, so that CUDA_STANDARD 20 works.
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
endif()
