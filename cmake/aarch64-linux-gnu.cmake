# Cross-compiles probkit for 64-bit Arm Linux with Debian's GCC cross compiler
# (g++-aarch64-linux-gnu), and runs what CMake and ctest run under qemu-user.
# scripts/test-arm64.sh sets this up; by hand:
#   cmake -S . -B build-arm64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake -DPROBKIT_CUDA=OFF
#
# The compiler brings its own C and C++ runtime (/usr/aarch64-linux-gnu).
# Highway, GoogleTest and libxxhash come from Debian's arm64 packages unpacked
# with `dpkg -x` into PROBKIT_ARM64_SYSROOT (by default .deps/arm64-sysroot,
# git-ignored), so the host needs no arm64 packages installed.
# QEMU_CPU in the environment picks the emulated CPU (e.g.
# max,sve-default-vector-length=64 for 512-bit SVE); the default is qemu's max.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(PROBKIT_CROSS_PREFIX aarch64-linux-gnu)
set(CMAKE_C_COMPILER ${PROBKIT_CROSS_PREFIX}-gcc)
set(CMAKE_CXX_COMPILER ${PROBKIT_CROSS_PREFIX}-g++)

if(NOT PROBKIT_ARM64_SYSROOT)
  if(DEFINED ENV{PROBKIT_ARM64_SYSROOT})
    set(PROBKIT_ARM64_SYSROOT "$ENV{PROBKIT_ARM64_SYSROOT}")
  else()
    get_filename_component(PROBKIT_ARM64_SYSROOT "${CMAKE_CURRENT_LIST_DIR}/../.deps/arm64-sysroot"
                           ABSOLUTE)
  endif()
endif()
set(PROBKIT_CROSS_RUNTIME /usr/${PROBKIT_CROSS_PREFIX})

# Libraries, headers and CMake packages from the target's trees only; programs
# (pkg-config, python3) from the host.
set(CMAKE_FIND_ROOT_PATH "${PROBKIT_ARM64_SYSROOT}" "${PROBKIT_CROSS_RUNTIME}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_LIBRARY_ARCHITECTURE ${PROBKIT_CROSS_PREFIX})

# pkg-config (libxxhash) reads the unpacked packages' .pc files only.
set(ENV{PKG_CONFIG_LIBDIR} "${PROBKIT_ARM64_SYSROOT}/usr/lib/${PROBKIT_CROSS_PREFIX}/pkgconfig")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${PROBKIT_ARM64_SYSROOT}")

# The shared libraries of the unpacked packages are found through the build
# tree's RUNPATH; the dynamic loader and libc through qemu's -L.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${PROBKIT_CROSS_RUNTIME})
