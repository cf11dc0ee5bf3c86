// PROBKIT_API marks what libprobkit exports. The library is compiled with
// hidden visibility (src/CMakeLists.txt), so a shared libprobkit offers its
// users the public API and nothing of its machinery: detail:: code can change
// within a SONAME without breaking a program, and its kernels cannot collide
// with another library's symbols. Classes are marked whole, so that their
// type information (which `catch (const probkit::Error&)` compares across the
// library's boundary) and out-of-line members are exported with them.
#pragma once

#if defined(__GNUC__) || defined(__clang__)
#define PROBKIT_API __attribute__((visibility("default")))
#else
#define PROBKIT_API
#endif
