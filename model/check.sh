#!/usr/bin/env bash
# Model-checks the lease / fencing / outbox protocol (model/switchboard.pml) exhaustively with spin.
# What is modelled, the bounds and the properties: docs/protocol-model.md.  Run: npm run model-check
#
# Fails (exit 1) unless every run of the correct model finishes a complete search with no error, and every
# planted bug is refuted with the violation it exists to show.  Exit 2: spin or the C compiler is missing.
#
#   MODEL_CHECK_JOBS=2      runs at a time (default 2)
#   MODEL_CHECK_TIMEOUT=300 seconds per pan run before it counts as an incomplete search
#   MODEL_CHECK_KEEP=1      keep the build directory (pan sources, outputs, trails) even when all is well
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
model="$here/switchboard.pml"
CC="${CC:-gcc}"
jobs_max="${MODEL_CHECK_JOBS:-2}"
limit="${MODEL_CHECK_TIMEOUT:-300}"

if ! command -v spin >/dev/null 2>&1; then
  echo "spin is not installed (apt-get install -y spin)" >&2
  exit 2
fi
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "$CC is not installed (apt-get install -y gcc)" >&2
  exit 2
fi

# Every pan run: a complete depth-first search (no bitstate hashing, no hash compaction: exhaustive), a
# search depth far above the deepest path (depth reached is < 800; a path deeper than -m is reported as
# "max search depth too small" and fails the run), and a memory limit, so a state explosion stops with
# "reached -DMEMLIM bound" (a failure too) instead of swapping.
DEPTH=20000
# -O2 for the full searches; -O0 for the planted bugs (found within milliseconds: compiling is the cost).
CFLAGS=(-w -DMEMLIM=4096)
PAN_COMMON=(-m"$DEPTH" -w24)

# name | kind | spin -D flags | expectation
#   kind safety: -DSAFETY -DNOCLAIM, ./pan            (assertions and invalid end states)
#   kind ltl:X:  acceptance cycles, ./pan -a -f -N X (the LTL claim X under weak fairness)
#   expectation: "pass", or an extended regex that pan's first error line must match (a planted bug)
# Heavy runs first (they set the wall time); bounds are the defaults of switchboard.pml unless given here.
runs=(
  "liveness (3 replicas, 2 expiries, 1 crash)|ltl:liveness|-DNR=3 -DMAXEXP=2 -DMAXCRASH=1|pass"
  "safety (3 replicas, 2 expiries, 1 crash)|safety|-DNR=3 -DMAXEXP=2 -DMAXCRASH=1|pass"
  "liveness (2 replicas, 6 expiries, 1 crash)|ltl:liveness|-DNR=2 -DMAXEXP=6 -DMAXCRASH=1|pass"
  "safety (2 replicas, 6 expiries, 2 crashes)|safety|-DNR=2 -DMAXEXP=6 -DMAXCRASH=2|pass"
  "planted NO_FENCE|safety|-DNO_FENCE|assertion violated \(\(token==tok\)&&\(holder==me\)\)"
  "planted NO_FENCE (effects only)|safety|-DNO_FENCE -DEFFECTS_ONLY|assertion violated \(ledger\[r\]<=1\)"
  "planted DOUBLE_CLAIM|safety|-DDOUBLE_CLAIM|assertion violated \(sent\[c\]<=1\)"
  "planted NO_RECOVERY|safety|-DNO_RECOVERY|assertion violated \(applied\["
  "planted NO_RECOVERY (effects only)|safety|-DNO_RECOVERY -DEFFECTS_ONLY|assertion violated \(ledger\[r\]<=1\)"
  "planted NO_TTL|ltl:liveness|-DNO_TTL|acceptance cycle"
)
# Larger bounds, for a change to the protocol (about a minute more of CPU, up to 3 GB of memory): MODEL_CHECK_DEEP=1
if [ -n "${MODEL_CHECK_DEEP:-}" ]; then
  runs=(
    "liveness (3 replicas, 2 expiries, 2 crashes)|ltl:liveness|-DNR=3 -DMAXEXP=2 -DMAXCRASH=2|pass"
    "safety (3 replicas, 2 expiries, 2 crashes)|safety|-DNR=3 -DMAXEXP=2 -DMAXCRASH=2|pass"
    "safety (3 replicas, 3 expiries, 1 crash)|safety|-DNR=3 -DMAXEXP=3 -DMAXCRASH=1|pass"
    "${runs[@]}"
  )
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/switchboard-model.XXXXXX")"
keep="${MODEL_CHECK_KEEP:-}"
cleanup() {
  local pid
  for pid in $(jobs -pr); do
    pkill -TERM -P "$pid" 2>/dev/null # its timeout and pan
    kill "$pid" 2>/dev/null
  done
  if [ -z "$keep" ]; then rm -rf "$work"; else echo "build directory kept: $work"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Builds and runs one verifier in $work/<index>; the verdict is decided afterwards from its files.
run_one() {
  local i="$1" kind="$2" defines="$3" expect="$4"
  local dir="$work/$i"
  mkdir -p "$dir" && cd "$dir" || return
  local cflags=("${CFLAGS[@]}") pan=("${PAN_COMMON[@]}")
  if [ "$expect" = pass ]; then cflags=(-O2 "${cflags[@]}"); else cflags=(-O0 "${cflags[@]}"); fi
  case "$kind" in
    safety) cflags+=(-DSAFETY -DNOCLAIM) ;;
    ltl:*) pan+=(-a -f -N "${kind#ltl:}") ;;
  esac
  # shellcheck disable=SC2086 # $defines is a list of -D flags
  echo "spin -a $defines switchboard.pml" > commands
  echo "$CC ${cflags[*]} -o pan pan.c" >> commands
  echo "./pan ${pan[*]}" >> commands
  cp "$model" switchboard.pml
  if ! spin -a $defines switchboard.pml > spin.log 2>&1 || [ ! -f pan.c ]; then echo build > failed; return; fi
  if ! "$CC" "${cflags[@]}" -o pan pan.c > cc.log 2>&1; then echo compile > failed; return; fi
  timeout "$limit" ./pan "${pan[@]}" > pan.out 2>&1
  echo $? > pan.rc
}

started=$SECONDS
for i in "${!runs[@]}"; do
  IFS='|' read -r _ kind defines expect <<< "${runs[$i]}"
  while [ "$(jobs -pr | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_one "$i" "$kind" "$defines" "$expect" &
done
wait

failures=0
fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
  keep=1
}

for i in "${!runs[@]}"; do
  IFS='|' read -r name kind defines expect <<< "${runs[$i]}"
  dir="$work/$i"
  if [ -f "$dir/failed" ]; then
    fail "$name: $(cat "$dir/failed") failed ($(cat "$dir/commands" | head -2 | tr '\n' ';'))"
    sed 's/^/    /' "$dir/spin.log" "$dir/cc.log" 2>/dev/null | head -20
    continue
  fi
  out="$dir/pan.out"
  rc="$(cat "$dir/pan.rc" 2>/dev/null || echo '?')"
  states="$(grep -Eo '[0-9.e+]+ states, stored' "$out" | head -1 | awk '{print $1}')"
  visited="$(sed -nE 's/.*states, stored \(([0-9.e+]+) visited\).*/\1/p' "$out" | head -1)"
  [ -n "$visited" ] && states="$states states ($visited visited under fairness)" || states="$states states"
  secs="$(grep -Eo 'elapsed time [0-9.e+]+' "$out" | awk '{print $3}')"
  errors="$(grep -Eo 'errors: [0-9]+' "$out" | awk '{print $2}')"
  first_error="$(grep -Em1 'assertion violated|acceptance cycle|non-progress cycle|invalid end state|pan:[0-9]+: ' "$out")"
  incomplete=""
  if [ "$rc" = 124 ]; then incomplete="timed out after ${limit}s"
  elif grep -q 'max search depth too small' "$out"; then incomplete="max search depth too small (raise -m)"
  elif grep -qE 'MEMLIM|out of memory' "$out"; then incomplete="memory exhausted"
  elif ! grep -q 'Full statespace search' "$out"; then incomplete="not a full state-space search"
  elif [ -z "$errors" ]; then incomplete="no verdict from pan (exit $rc)"
  fi

  if [ "$expect" = pass ]; then
    if [ -n "$incomplete" ]; then
      fail "$name: search incomplete: $incomplete"
    elif [ "$errors" != 0 ]; then
      fail "$name: $errors error(s): $first_error (trail: $dir, replay with spin -t -p $defines switchboard.pml)"
    elif ! grep -A1 'unreached in proctype Replica' "$out" | grep -q '(0 of '; then
      # every line of the replica, the fenced aborts and the recovery rule included, must be exercised
      fail "$name: part of the replica is never reached: $(grep -A3 'unreached in proctype Replica' "$out" | tail -n +2 | tr -s ' \t\n' ' ')"
    else
      echo "ok: $name (no errors, $states, ${secs:-?} s)"
    fi
  else
    if [ -n "$errors" ] && [ "$errors" != 0 ] && printf '%s\n' "$first_error" | grep -Eq "$expect"; then
      what="$(printf '%s' "$first_error" | sed -E 's/^pan:[0-9]+: //')"
      echo "ok: $name refuted as expected ($what, ${secs:-?} s)"
    elif [ -n "$errors" ] && [ "$errors" != 0 ]; then
      fail "$name: refuted, but not by the expected violation /$expect/: $first_error"
    elif [ -n "$incomplete" ]; then
      fail "$name was NOT refuted: search incomplete: $incomplete"
    else
      fail "$name was NOT refuted ($states searched): the model no longer catches this bug"
    fi
  fi
done

total=${#runs[@]}
if [ "$failures" -gt 0 ]; then
  echo "model-check: $failures of $total runs failed ($((SECONDS - started)) s)"
  exit 1
fi
echo "model-check: all $total runs ok ($((SECONDS - started)) s)"
