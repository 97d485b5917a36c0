#!/usr/bin/env bash
# Model-checks Switchboard's protocols exhaustively with spin: the lease / fencing / outbox protocol
# (protocol-model/switchboard.pml) and the call_agent protocol (protocol-model/calls.pml).  What is modelled, the bounds and the
# properties: docs/engineering/protocol-model.md.  Run: npm run model-check
#
# Fails (exit 1) unless every run of a correct model finishes a complete search with no error, every planted bug
# is refuted with the violation it exists to show, and every reachability witness is reached.  Exit 2: spin or
# the C compiler is missing.
#
#   MODEL_CHECK_JOBS=2      runs at a time (default 2)
#   MODEL_CHECK_TIMEOUT=300 seconds per pan run before it counts as an incomplete search
#   MODEL_CHECK_KEEP=1      keep the build directory (pan sources, outputs, trails) even when all is well
#   MODEL_CHECK_ONLY=calls  only the runs of one model (switchboard or calls)
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
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

# name | model | kind | spin -D flags | expectation [| build]
#   model: switchboard (switchboard.pml) or calls (calls.pml)
#   kind safety:        -DSAFETY -DNOCLAIM, ./pan            (assertions and invalid end states)
#   kind ltl:X:         acceptance cycles, ./pan -a -f -N X (the LTL claim X under weak fairness)
#   kind ltl-nofair:X:  acceptance cycles, ./pan -a -N X    (no fairness: for a model whose every run ends, so
#                       that its only infinite runs stutter in a final state; weak fairness would hide those)
#   expectation: "pass", or an extended regex that pan's first error line must match (a planted bug, or a
#                reachability witness: -DWITNESS=<branch> asserts that the branch is never taken)
#   build: the C optimisation, -O2 or -O0 (default: -O2 for an expected pass, -O0 otherwise: a refutation is
#          found within milliseconds, so compiling is the cost)
# Heavy runs first (they set the wall time); bounds are each model's defaults unless given here.
CHATS1="-DNS=1 -DNT=3"                                  # 1 chat, 3 agents, depth 2, 1 crash, 1 cancel
CHATS2="-DNS=2 -DNT=2 -DMAXCRASH=0 -DMAXCANCEL=0"       # 2 chats, 2 agents, depth 2, cap 1, queue 1
NODEADLINES="-DNS=2 -DNT=2 -DMAXCRASH=0 -DNO_TIMEOUTS"  # 2 chats without any deadline, 1 cancel
runs=(
  "liveness (3 replicas, 2 expiries, 1 crash)|switchboard|ltl:liveness|-DNR=3 -DMAXEXP=2 -DMAXCRASH=1|pass"
  "safety (3 replicas, 2 expiries, 1 crash)|switchboard|safety|-DNR=3 -DMAXEXP=2 -DMAXCRASH=1|pass"
  "calls: safety (2 chats, cap 1, queue 1)|calls|safety|$CHATS2|pass"
  "calls: liveness (1 chat, 3 agents, 1 crash, 1 cancel)|calls|ltl-nofair:ends|$CHATS1|pass"
  "calls: safety (2 chats, cap 1, no queue)|calls|safety|$CHATS2 -DQMAX=0|pass"
  "liveness (2 replicas, 6 expiries, 1 crash)|switchboard|ltl:liveness|-DNR=2 -DMAXEXP=6 -DMAXCRASH=1|pass"
  "safety (2 replicas, 6 expiries, 2 crashes)|switchboard|safety|-DNR=2 -DMAXEXP=6 -DMAXCRASH=2|pass"
  "calls: safety (1 chat, 3 agents, 1 crash, 1 cancel)|calls|safety|$CHATS1|pass|-O0"
  "calls: no deadlock without deadlines (2 chats, 1 cancel)|calls|safety|$NODEADLINES|pass|-O0"
  "planted NO_FENCE|switchboard|safety|-DNO_FENCE|assertion violated \(\(token==tok\)&&\(holder==me\)\)"
  "planted NO_FENCE (effects only)|switchboard|safety|-DNO_FENCE -DEFFECTS_ONLY|assertion violated \(ledger\[r\]<=1\)"
  "planted DOUBLE_CLAIM|switchboard|safety|-DDOUBLE_CLAIM|assertion violated \(sent\[c\]<=1\)"
  "planted NO_RECOVERY|switchboard|safety|-DNO_RECOVERY|assertion violated \(applied\["
  "planted NO_RECOVERY (effects only)|switchboard|safety|-DNO_RECOVERY -DEFFECTS_ONLY|assertion violated \(ledger\[r\]<=1\)"
  "planted NO_TTL|switchboard|ltl:liveness|-DNO_TTL|acceptance cycle"
  "calls: planted NO_DEADLOCK_CHECK|calls|safety|$NODEADLINES -DNO_DEADLOCK_CHECK|invalid end state"
  "calls: planted NO_DEPTH_RULE|calls|safety|$CHATS1 -DNO_DEPTH_RULE|assertion violated \(\(d\+1\)<=2\)"
  "calls: planted NO_CYCLE_RULE (cap 2)|calls|safety|$CHATS1 -DCAP=2 -DNO_CYCLE_RULE|assertion violated +!\(\(\(ch>>t\)&1\)\)"
  "calls: planted WAIT_FOR_CALLEE|calls|ltl-nofair:ends|$CHATS1 -DWAIT_FOR_CALLEE|acceptance cycle"
  "calls: planted DEADLINE_AFTER_SLOT|calls|safety|$CHATS2 -DDEADLINE_AFTER_SLOT|invalid end state"
  "calls: planted RECALL_ON_RESTART|calls|safety|$CHATS1 -DRECALL_ON_RESTART|assertion violated \(activations\[k\]<=1\)"
  "calls: planted SHARED_JOURNAL|calls|safety|$CHATS1 -DSHARED_JOURNAL|assertion violated \(activations\[k\]<=1\)"
  "calls: planted RELEASE_ON_ANSWER|calls|safety|$CHATS2 -DRELEASE_ON_ANSWER|assertion violated \(running\[t\]<=1\)"
)
# Reachability witnesses of the call model: each branch is taken somewhere within the default bounds.
for witness in "cycle_refused|$CHATS1" "depth_refused|$CHATS1" "stopped_before_acquire|$CHATS1" "cancel_stops_call|$CHATS1" \
  "timed_out_running|$CHATS1" "recovery_rule|$CHATS1" "granted_from_queue|$CHATS2" "wait_timed_out|$CHATS2" \
  "queue_full|$CHATS2 -DQMAX=0" "deadlock_refused|$NODEADLINES"; do
  runs+=("calls: reaches ${witness%%|*}|calls|safety|${witness#*|} -DWITNESS=${witness%%|*}|assertion violated .*&&${witness%%|*}\)")
done
# Larger bounds, for a change to a protocol (about two minutes more of CPU, up to 3 GB of memory): MODEL_CHECK_DEEP=1
if [ -n "${MODEL_CHECK_DEEP:-}" ]; then
  runs=(
    "liveness (3 replicas, 2 expiries, 2 crashes)|switchboard|ltl:liveness|-DNR=3 -DMAXEXP=2 -DMAXCRASH=2|pass"
    "calls: liveness (2 chats, cap 1, queue 1)|calls|ltl-nofair:ends|$CHATS2|pass"
    "safety (3 replicas, 2 expiries, 2 crashes)|switchboard|safety|-DNR=3 -DMAXEXP=2 -DMAXCRASH=2|pass"
    "calls: safety (2 chats, cap 1, no queue, 1 cancel)|calls|safety|-DNS=2 -DNT=2 -DMAXCRASH=0 -DQMAX=0|pass"
    "calls: no deadlock without deadlines (2 chats, 1 crash, 1 cancel)|calls|safety|-DNS=2 -DNT=2 -DNO_TIMEOUTS|pass"
    "safety (3 replicas, 3 expiries, 1 crash)|switchboard|safety|-DNR=3 -DMAXEXP=3 -DMAXCRASH=1|pass"
    "${runs[@]}"
  )
fi
if [ -n "${MODEL_CHECK_ONLY:-}" ]; then
  case "$MODEL_CHECK_ONLY" in switchboard | calls) ;; *) echo "MODEL_CHECK_ONLY must be switchboard or calls" >&2; exit 2 ;; esac
  kept=()
  for run in "${runs[@]}"; do
    IFS='|' read -r _ model _ <<< "$run"
    [ "$model" = "$MODEL_CHECK_ONLY" ] && kept+=("$run")
  done
  runs=("${kept[@]}")
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
  local i="$1" model="$2" kind="$3" defines="$4" expect="$5" build="$6"
  local dir="$work/$i" file="$model.pml"
  mkdir -p "$dir" && cd "$dir" || return
  local cflags=("${CFLAGS[@]}") pan=("${PAN_COMMON[@]}")
  if [ -z "$build" ]; then
    if [ "$expect" = pass ]; then build=-O2; else build=-O0; fi
  fi
  cflags=("$build" "${cflags[@]}")
  case "$kind" in
    safety) cflags+=(-DSAFETY -DNOCLAIM) ;;
    ltl:*) pan+=(-a -f -N "${kind#ltl:}") ;;
    ltl-nofair:*) pan+=(-a -N "${kind#ltl-nofair:}") ;;
  esac
  # shellcheck disable=SC2086 # $defines is a list of -D flags
  echo "spin -a $defines $file" > commands
  echo "$CC ${cflags[*]} -o pan pan.c" >> commands
  echo "./pan ${pan[*]}" >> commands
  cp "$here/$file" "$file"
  if ! spin -a $defines "$file" > spin.log 2>&1 || [ ! -f pan.c ]; then echo build > failed; return; fi
  if ! "$CC" "${cflags[@]}" -o pan pan.c > cc.log 2>&1; then echo compile > failed; return; fi
  timeout "$limit" ./pan "${pan[@]}" > pan.out 2>&1
  echo $? > pan.rc
}

started=$SECONDS
for i in "${!runs[@]}"; do
  IFS='|' read -r _ model kind defines expect build <<< "${runs[$i]}"
  while [ "$(jobs -pr | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  run_one "$i" "$model" "$kind" "$defines" "$expect" "${build:-}" &
done
wait

failures=0
fail() {
  echo "FAIL: $1"
  failures=$((failures + 1))
  keep=1
}

for i in "${!runs[@]}"; do
  IFS='|' read -r name model kind defines expect _ <<< "${runs[$i]}"
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
  case "$kind" in ltl:*) under=" under fairness" ;; *) under="" ;; esac
  [ -n "$visited" ] && states="$states states ($visited visited$under)" || states="$states states"
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
      fail "$name: $errors error(s): $first_error (trail: $dir, replay with spin -t -p $defines $model.pml)"
    elif [ "$model" = switchboard ] && ! grep -A1 'unreached in proctype Replica' "$out" | grep -q '(0 of '; then
      # every line of the replica, the fenced aborts and the recovery rule included, must be exercised
      fail "$name: part of the replica is never reached: $(grep -A3 'unreached in proctype Replica' "$out" | tail -n +2 | tr -s ' \t\n' ' ')"
    else
      echo "ok: $name (no errors, $states, ${secs:-?} s)"
    fi
  else
    what="$(printf '%s' "$first_error" | sed -E 's/^pan:[0-9]+: //')"
    witness=""
    case " $defines" in *" -DWITNESS="*) witness=1 ;; esac
    if [ -n "$errors" ] && [ "$errors" != 0 ] && printf '%s\n' "$first_error" | grep -Eq "$expect"; then
      if [ -n "$witness" ]; then echo "ok: $name ($what, ${secs:-?} s)"; else echo "ok: $name refuted as expected ($what, ${secs:-?} s)"; fi
    elif [ -n "$errors" ] && [ "$errors" != 0 ]; then
      fail "$name: refuted, but not by the expected violation /$expect/: $first_error"
    elif [ -n "$incomplete" ]; then
      fail "$name was NOT refuted: search incomplete: $incomplete"
    elif [ -n "$witness" ]; then
      fail "$name: the branch is never taken within these bounds ($states searched): it goes unchecked"
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
