#!/usr/bin/env python3
"""Fails when a shared libprobkit exports anything beyond its public API.

Every symbol the library defines in its dynamic table must be either one of
probkit's public names (the classes and functions marked PROBKIT_API in
include/probkit/) or an instantiation of the standard library's own templates
(vague linkage that the compiler gives default visibility, which the library
cannot hide). A kernel, a worker pool function or a Highway symbol exported by
mistake is named in the failure.

usage: check_exports.py path/to/libprobkit.so
"""
import re
import subprocess
import sys

# The public names, as PROBKIT_API marks them; a new public class or free
# function joins this list.
PUBLIC = (
    "AllocationError", "BloomFilter", "Error", "HyperLogLog", "Keys",
    "available_backends", "bloom_model_fpr", "hll_estimate_from_histogram", "last_served", "operator==",
    "parse_backend", "set_simd_target", "set_threads", "simd_target", "simd_targets", "threads", "to_string",
    # Members of the public classes: their storage, and its moved-from check.
    "detail::Storage", "detail::require_not_moved_from",
)
PREFIXES = ("typeinfo name for ", "typeinfo for ", "vtable for ", "VTT for ", "guard variable for ")


def qualified_name(symbol):
    """The entity's qualified name: a demangled function template carries its
    return type ("void std::__atomic_notify_address<int>(int const*, bool)"),
    and a function its parameters; both are cut off."""
    for prefix in PREFIXES:
        if symbol.startswith(prefix):
            symbol = symbol[len(prefix):]
    depth, cut, start = 0, len(symbol), 0
    for i, c in enumerate(symbol):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth == 0 and c == "(" and i > 0 and not symbol[:i].endswith("operator"):
            cut = i
            break
        elif depth == 0 and c == " " and not symbol[:i].endswith("operator"):
            start = i + 1
    return symbol[start:cut]


def public(symbol):
    name = qualified_name(symbol)
    if name.startswith("std::") and "probkit" not in symbol:
        return True
    if not name.startswith("probkit::"):
        return False
    rest = name[len("probkit::"):]
    return any(re.match(re.escape(p) + r"(?![A-Za-z0-9_])", rest) for p in PUBLIC)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = subprocess.run(["nm", "-D", "--defined-only", "-C", sys.argv[1]], check=True, capture_output=True,
                         text=True).stdout
    names = [line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2]
    if not any(n.startswith("probkit::BloomFilter::") for n in names):
        sys.exit(f"{sys.argv[1]}: no probkit::BloomFilter symbols found; is this libprobkit?")
    leaked = sorted({n for n in names if not public(n)})
    if leaked:
        print(f"{sys.argv[1]} exports {len(leaked)} symbol(s) beyond the public API:")
        for n in leaked[:50]:
            print("  " + n)
        sys.exit(1)
    print(f"{sys.argv[1]}: {len(names)} symbols exported, all public")


if __name__ == "__main__":
    main()
