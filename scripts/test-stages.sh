#!/usr/bin/env bash
# `make test`: run `make test-<stage>` for each step in order, then print how long each stage took.
# A step "a,b+c,d" runs two lanes side by side, a then b in one, c then d in the other; each
# stage's output is kept in a log and printed whole as the stage ends, so two never interleave.
# A lane stops at its first failing stage, and the run after the first step with a failure,
# with that stage's exit status. Beside each stage's time, the CPU its processes used (bash's
# `times`; servers that daemonize are not counted): a stage far below its time mostly waits.
set -uo pipefail
started=$SECONDS
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

children_cpu() { # sets cpu: the CPU seconds of this shell's finished children, user + system
  local user system
  times >"$logs/times.$BASHPID" # a builtin, not in a subshell: it must see this shell's children
  { read -r _ && read -r user system; } <"$logs/times.$BASHPID"
  cpu=$(awk -v u="$user" -v s="$system" 'function secs(t) { split(t, p, "m"); return p[1] * 60 + p[2] }
    BEGIN { printf "%d", secs(u) + secs(s) }')
}

run_lane() { # beside stage...: each stage in turn until one fails; beside=yes: output held back
  local beside=$1 stage stage_started status cpu cpu_before
  shift
  for stage in "$@"; do
    stage_started=$SECONDS
    children_cpu
    cpu_before=$cpu
    if [[ $beside == yes ]]; then
      make --no-print-directory "test-$stage" >"$logs/$stage.log" 2>&1
      status=$?
      { flock 9 && echo "=== test-$stage ===" && cat "$logs/$stage.log"; } 9>"$logs/print.lock"
    else
      echo "=== test-$stage ==="
      make --no-print-directory "test-$stage"
      status=$?
    fi
    children_cpu
    echo "$status $((SECONDS - stage_started)) $((cpu - cpu_before))" >"$logs/$stage.status"
    [[ $status -eq 0 ]] || return "$status"
  done
}

report=()
status=0
for step in "$@"; do
  rm -f "$logs"/*.status
  IFS=+ read -ra lanes <<<"$step"
  beside=no
  if [[ ${#lanes[@]} -gt 1 ]]; then
    beside=yes
    echo "=== side by side: ${lanes[*]} ==="
  fi
  for lane in "${lanes[@]}"; do
    IFS=, read -ra stages <<<"$lane"
    if [[ $beside == yes ]]; then run_lane yes "${stages[@]}" & else run_lane no "${stages[@]}"; fi
  done
  wait
  for lane in "${lanes[@]}"; do
    IFS=, read -ra stages <<<"$lane"
    for stage in "${stages[@]}"; do
      [[ -f $logs/$stage.status ]] || continue # its lane stopped before it
      read -r stage_status seconds cpu <"$logs/$stage.status"
      outcome=$([[ $stage_status -eq 0 ]] && echo passed || echo "FAILED ($stage_status)")
      [[ $beside == yes ]] && outcome+=" (lane ${lane//,/ then })"
      report+=("$(printf '  %-12s %5d s  %5d s CPU  %s' "$stage" "$seconds" "$cpu" "$outcome")")
      [[ $stage_status -eq 0 || $status -ne 0 ]] || status=$stage_status
    done
  done
  [[ $status -eq 0 ]] || break
done
echo "=== stage durations ==="
printf '%s\n' "${report[@]}"
printf '  %-12s %5d s\n' total $((SECONDS - started))
exit "$status"
