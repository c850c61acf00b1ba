#!/usr/bin/env bash
# `make test`: run `make test-<stage>` for each stage in order, then print how long each
# took. Stops at the first stage that fails, with that stage's exit status.
set -uo pipefail
started=$SECONDS
report=()
status=0
for stage in "$@"; do
  stage_started=$SECONDS
  echo "=== test-$stage ==="
  make --no-print-directory "test-$stage"
  status=$?
  outcome=$([[ $status -eq 0 ]] && echo passed || echo "FAILED ($status)")
  report+=("$(printf '  %-12s %5d s  %s' "$stage" $((SECONDS - stage_started)) "$outcome")")
  [[ $status -eq 0 ]] || break
done
echo "=== stage durations ==="
printf '%s\n' "${report[@]}"
printf '  %-12s %5d s\n' total $((SECONDS - started))
exit "$status"
