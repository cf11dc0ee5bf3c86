#!/usr/bin/env bash
# pipeline_steps_inlined.sh COMPILER_ID CONFIG OBJECT...: fails if GCC left
# a hash pipeline's step (run_pipeline's lambda, hash-inl.h) or a step's
# hook (an AfterStep) out of line in the CPU kernels' objects, naming each.
# GCC refuses inlines past its unit-growth budget (cpu/CMakeLists.txt raises
# it for the kernels); a step refused for that or any other reason fails here.
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
if [[ -n $steps ]]; then
  echo "Hash pipeline steps or hooks left out of line (their vectors go through memory):"
  sed -E 's/^[0-9a-f]+ [A-Za-z] /  /' <<< "$steps"
  exit 1
fi
echo "every hash pipeline step and hook is inlined"
