# shellcheck shell=bash
# Sourced by scripts/ab-variants.sh and scripts/mutants.sh, whose patches
# (bench/variants/, tests/mutants/) begin with "Field: value" lines before
# their diff.

header() {  # header FIELD PATCH: the field's value from the patch's header
  sed -n "/^diff --git/q; s/^$1: //p" "$2"
}
