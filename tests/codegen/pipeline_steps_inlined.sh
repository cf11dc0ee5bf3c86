#!/usr/bin/env bash
# pipeline_steps_inlined.sh COMPILER_ID CONFIG OBJECT...: fails if GCC left
# a hash pipeline's step (run_pipeline's lambda, hash-inl.h) or a step's
# hook (an AfterStep) out of line in the CPU kernels' objects, naming each.
# The one known exception: the 8-byte strings' pipeline (hash_width8_pipelined,
# hash_fixed_pipelined with no scalar key and no hook), whose step GCC 12
# leaves out of line and no benchmark measures (docs/PERF-NOTES.md, "AVX2
# pipeline for 16-byte strings").
set -euo pipefail
compiler=$1 config=$2
shift 2
if [[ $compiler != GNU || $config != Release ]]; then
  echo "SKIP: measured with GCC in Release builds; this build is $compiler $config"
  exit 77
fi
command -v nm > /dev/null || { echo "SKIP: nm not found"; exit 77; }
symbols=$(nm -C --defined-only "$@")
# A step: the lambda run_pipeline calls, (load, store, loads, stores); a hook:
# (out, first, n).
steps=$(grep -E '\{lambda\((unsigned long, unsigned long, bool, bool|unsigned long\*, unsigned long, unsigned long)\)#[0-9]+\}::operator\(\)' <<< "$symbols" || true)
known='hash_fixed_pipelined<false, probkit::cpu::N_[A-Z0-9_]+::Hash64Bit<(true|false), \(probkit::cpu::Avx2U64Hash\)0>, 0ul, probkit::cpu::N_[A-Z0-9_]+::NoAfterStep>'
outlined=$(grep -Ev "$known" <<< "$steps" || true)
if [[ -n $outlined ]]; then
  echo "Hash pipeline steps or hooks left out of line (their vectors go through memory):"
  sed -E 's/^[0-9a-f]+ [A-Za-z] /  /' <<< "$outlined"
  exit 1
fi
echo "every hash pipeline step and hook is inlined ($(grep -c . <<< "$steps" || true) known 8-byte strings steps out of line)"
