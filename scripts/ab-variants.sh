#!/usr/bin/env bash
# A/B runs of the kernel variants in bench/variants/ against the commit they
# patch, for the choices docs/PERF-NOTES.md lists under "Still to measure":
# forms measured on one machine and not where they matter most. A session on
# such a machine runs this first; each variant answers one question there.
#
#   scripts/ab-variants.sh --list                 the variants and their questions
#   scripts/ab-variants.sh [options] [VARIANT...] build and A/B them (default: all)
#   scripts/ab-variants.sh --clean                remove the worktrees and builds
#   scripts/ab-variants.sh --check                every variant applies to this tree (ctest)
#
# Options: --base REV (default HEAD: committed code only), --rounds N (default
# 5), --reps N (default 5). Each variant is a patch with a header (Variant,
# Question, Where, Filter); its Filter picks the benchmarks it moves and one
# it leaves alone, whose figures show the run's noise. For each variant and
# the base: a git worktree under AB_DIR (default ${TMPDIR:-/tmp}/probkit-ab),
# built as scripts/bench-report.sh builds probkit_bench, kept from one run to
# the next (rebuilt incrementally); then scripts/ab-bench.py alternates base
# and variant, and the table at the end gives each benchmark's medians and
# their ratio. Results: AB_DIR/<variant>.jsonl and .txt. Seven variants,
# builds included, took 9 minutes on a two-vCPU guest. A variant that no
# longer applies is reported and skipped (fix its patch against the code it
# names); the exit status is then 1.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
variants_dir=bench/variants
ab_dir=${AB_DIR:-${TMPDIR:-/tmp}/probkit-ab}
base=HEAD rounds=5 reps=5
names=()

# shellcheck source=scripts/patch-header.sh
source scripts/patch-header.sh

all_variants() {
  local p
  for p in "$variants_dir"/*.patch; do basename "$p" .patch; done
}

while [[ $# -gt 0 ]]; do
  case $1 in
    --list)
      for name in $(all_variants); do
        p=$variants_dir/$name.patch
        printf '%s\n  question: %s\n  where: %s\n' "$name" "$(header Question "$p")" "$(header Where "$p")"
      done
      exit 0 ;;
    --clean)
      rm -rf "$ab_dir"
      git worktree prune
      exit 0 ;;
    --check)
      # Each patch applies to the working tree as it is (nothing is written),
      # and its header names a question and a filter. A change to the code a
      # variant patches refreshes the patch, or deletes the variant once it
      # has been measured where its header says.
      failed=0
      for name in $(all_variants); do
        p=$variants_dir/$name.patch
        if [[ -z $(header Question "$p") || -z $(header Filter "$p") ]]; then
          echo "ab-variants: $p lacks a Question or Filter line above its diff" >&2
          failed=1
        elif ! git apply --check "$p"; then
          echo "ab-variants: $p no longer applies: refresh it against the code it patches, or delete it" >&2
          failed=1
        fi
      done
      [[ $failed == 0 ]] && echo "ab-variants: every variant applies ($(all_variants | wc -l))"
      exit $failed ;;
    --base) base=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "ab-variants: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) names+=("$1"); shift ;;
  esac
done
[[ ${#names[@]} -gt 0 ]] || mapfile -t names < <(all_variants)
for name in "${names[@]}"; do
  [[ -f $variants_dir/$name.patch ]] || { echo "ab-variants: no variant $name (--list)" >&2; exit 2; }
done
rev=$(git rev-parse --verify "$base^{commit}")
mkdir -p "$ab_dir"

# prepare NAME [PATCH]: a worktree of rev at AB_DIR/NAME with PATCH applied,
# and its probkit_bench built.
prepare() {
  local tree=$ab_dir/$1
  if [[ -d $tree ]]; then
    git -C "$tree" checkout -q --detach -f "$rev"  # -f: drops the patch applied before
    git -C "$tree" clean -q -fd  # files an earlier patch added (builds are ignored: kept)
  else
    git worktree prune  # a tree deleted by hand (a cleaned /tmp) is still registered
    git worktree add -q --detach "$tree" "$rev"
  fi
  if [[ -n ${2:-} ]] && ! git -C "$tree" apply "$repo/$2"; then
    echo "ab-variants: $2 does not apply to $rev; skipped" >&2
    return 1
  fi
  cmake -S "$tree" -B "$tree/build-bench" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPROBKIT_BUILD_TESTS=OFF \
    -DPROBKIT_CUDA=OFF -DPROBKIT_BUILD_BENCH=ON > /dev/null
  ninja -C "$tree/build-bench" -j "$(nproc)" probkit_bench > "$tree/build.log" 2>&1 ||
    { tail -20 "$tree/build.log" >&2; echo "ab-variants: $1 did not build" >&2; return 1; }
}

echo "ab-variants: base $rev, trees in $ab_dir" >&2
prepare base
status=0
for name in "${names[@]}"; do
  patch=$variants_dir/$name.patch
  echo "ab-variants: $name: $(header Question "$patch")" >&2
  prepare "$name" "$patch" || { status=1; continue; }
  # Links named after each tree, so that ab-bench.py's table names them.
  mkdir -p "$ab_dir/bin"
  ln -sf "$ab_dir/base/build-bench/bench/probkit_bench" "$ab_dir/bin/base"
  ln -sf "$ab_dir/$name/build-bench/bench/probkit_bench" "$ab_dir/bin/$name"
  rm -f "$ab_dir/$name.jsonl"
  if ! python3 scripts/ab-bench.py --filter "$(header Filter "$patch")" --rounds "$rounds" --reps "$reps" \
    --out "$ab_dir/$name.jsonl" "$ab_dir/bin/base" "$ab_dir/bin/$name" | tee "$ab_dir/$name.txt"; then
    echo "ab-variants: $name: the A/B failed (above); the next variant follows" >&2
    status=1
  fi
done
exit $status
