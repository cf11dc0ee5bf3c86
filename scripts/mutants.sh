#!/usr/bin/env bash
# Mutation runs: does the test suite catch plausible defects? Each patch in
# tests/mutants/ plants one (an off-by-one, a check removed or moved after the
# first write, a constant wrong in its last digit, ...); this builds the
# library with it and runs the tests. A mutant the suite lets through either
# changes nothing a user can observe (its header says "Expect: survives" and
# why) or shows a test missing.
#
#   scripts/mutants.sh --list             the mutants, where and what
#   scripts/mutants.sh --check            every patch applies to this tree and names tests that exist
#   scripts/mutants.sh [NAME|GLOB...]     run them (default: all; e.g. 'core-*' or io-R13)
#
# Each patch has a header: Mutant, Where, Change, Tests (a ctest regex of the
# tests expected to fail, run first) and Expect ("killed", "survives: why", or
# "either: why" for a defect a native run sees only now and then).
# A mutant those tests let through is run against the whole suite before it
# is called a survivor. Builds go to a git worktree of HEAD (committed code)
# under MUTANTS_DIR (default ${TMPDIR:-/tmp}/probkit-mutants), configured as
# CI configures it and kept from one run to the next. A hung test counts as a
# failure after MUTANTS_TIMEOUT seconds (default 120). All 150 take about
# 90 minutes on two vCPUs, most of it building. The exit status is 1 where a mutant
# meant to be killed survived, one meant to survive was killed (its header is
# then wrong), or a patch no longer applies (refresh it against the code it
# names).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
mutants_dir=tests/mutants
work=${MUTANTS_DIR:-${TMPDIR:-/tmp}/probkit-mutants}
timeout=${MUTANTS_TIMEOUT:-120}

# shellcheck source=scripts/patch-header.sh
source scripts/patch-header.sh

selected() {  # the patches the arguments name, all where there are none
  local p name
  for p in "$mutants_dir"/*.patch; do
    name=$(basename "$p" .patch)
    if [[ $# -eq 0 ]]; then echo "$p"; continue; fi
    for pattern in "$@"; do
      # shellcheck disable=SC2053  # the argument is a glob on purpose
      if [[ $name == $pattern ]]; then echo "$p"; break; fi
    done
  done
}

if [[ ${1:-} == --list ]]; then
  for p in $(selected); do
    printf '%-10s %-40s %s\n' "$(basename "$p" .patch)" "$(header Where "$p")" "$(header Change "$p")"
  done
  exit 0
fi

if [[ ${1:-} == --check ]]; then
  # Applies each patch to the working tree as it is (nothing is written), and
  # asks the build's ctest (PROBKIT_BUILD_DIR, default build) whether its
  # Tests regex matches a test.
  build=${PROBKIT_BUILD_DIR:-build}
  tests=$(ctest --test-dir "$build" -N | sed -n 's/^ *Test *#[0-9]*: //p')
  failed=0
  for p in $(selected); do
    name=$(basename "$p" .patch)
    if ! git apply --check "$p" 2>/dev/null; then
      echo "$name: no longer applies"
      failed=1
    fi
    regex=$(header Tests "$p")
    if [[ -z $regex ]] || ! grep -Eq -- "$regex" <<<"$tests"; then
      echo "$name: its Tests regex '$regex' matches no test"
      failed=1
    fi
    expect=$(header Expect "$p")
    if [[ $expect != killed && $expect != survives:* && $expect != either:* ]]; then
      echo "$name: Expect is '$expect', not 'killed', 'survives: why' or 'either: why'"
      failed=1
    fi
  done
  [[ $failed == 0 ]] && echo "every mutant applies and names tests that exist"
  exit "$failed"
fi

patches=$(selected "$@")
if [[ -z $patches ]]; then
  echo "mutants.sh: no mutant matches: $*" >&2
  exit 2
fi

tree=$work/tree
git worktree prune
if [[ ! -d $tree ]]; then
  mkdir -p "$work"
  git worktree add --detach "$tree" HEAD >/dev/null
else
  git -C "$tree" checkout -f --detach -q "$(git rev-parse HEAD)"
fi
git -C "$tree" checkout -f -q -- .
cmake -S "$tree" -B "$tree/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROBKIT_WARNINGS_AS_ERRORS=ON >/dev/null
cmake --build "$tree/build" -j "$(nproc)" >/dev/null

failing_tests() {  # the names ctest lists as failed in its output ($1)
  sed -n '/The following tests FAILED:/,$ s/^[[:space:]]*[0-9]* - \([^ ]*\).*/\1/p' "$1" | head -3 | paste -sd ' '
}

results=$work/results.txt
: >"$results"
status=0
for p in $patches; do
  name=$(basename "$p" .patch)
  expect=$(header Expect "$p")
  regex=$(header Tests "$p")
  log=$work/$name.log
  if ! git -C "$tree" apply "$repo/$p" 2>/dev/null; then
    result="does not apply"
  elif ! cmake --build "$tree/build" -j "$(nproc)" >"$log" 2>&1; then
    result="does not build"
  elif ! ctest --test-dir "$tree/build" -j "$(nproc)" --timeout "$timeout" -R "$regex" >"$log" 2>&1; then
    result="killed by $(failing_tests "$log")"
  elif ! ctest --test-dir "$tree/build" -j "$(nproc)" --timeout "$timeout" >"$log" 2>&1; then
    result="killed by $(failing_tests "$log") (outside its Tests)"
  else
    result="SURVIVED"
  fi
  git -C "$tree" checkout -f -q -- .
  case $result in
    killed*)
      if [[ $expect == survives:* ]]; then
        result="$result -- header says it survives"
        status=1
      fi ;;
    SURVIVED)
      if [[ $expect == survives:* || $expect == either:* ]]; then
        result="survived, as its header allows"
      else
        status=1
      fi ;;
    *) status=1 ;;
  esac
  printf '%-10s %s\n' "$name" "$result" | tee -a "$results"
done
cmake --build "$tree/build" -j "$(nproc)" >/dev/null  # back to HEAD's code for the next run
echo "results: $results"
exit "$status"
