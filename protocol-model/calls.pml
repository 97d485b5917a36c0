/*
 * Switchboard: the call_agent protocol (agent-to-agent calls) of several chats served by one process.
 *
 * Checked by model/check.sh; what each element stands for in the code, the bounds and the properties:
 * docs/engineering/protocol-model.md ("The call protocol").
 *
 *   NS chat sessions each have a main agent that makes one call_agent call.  A callee runs in batch mode as a
 *   process of its own; it answers, hangs (a tool that ignores its abort and never returns), or makes one call of
 *   its own.  Calls obey the chain rules (no agent twice in a chain, at most DMAX frames below main) and the
 *   per-target limiter shared by every session (CAP slots, a queue of QMAX, a wait that would deadlock refused
 *   at once).  A call's deadline covers the wait for a slot and the run; when the deadline passes or the caller
 *   is cancelled, the caller is answered at once and the callee keeps its slot until it really stops.
 *   Main's call is a side-effecting tool use: "tool about to run" is committed before it (step 1), the result
 *   and the cleared mark after it (step 2); a restart that finds the mark without a result answers
 *   "interrupted" and does not call again.  Every block is one atomic step of the single-threaded process.
 *
 *   Environment:
 *     Time    - the deadline of any call that is waiting or running may pass, at any moment and in any order
 *     Faults  - at most MAXCANCEL /cancel of a running task, at most MAXCRASH crashes of the process (memory
 *               lost; every session restarts from what is committed); it may stop at any time
 *   Every wait ends only when something changes and every fault is bounded, so every run of the model ends: it
 *   has no cycles, and its only infinite runs stutter in a final state.  So the liveness claim is checked with no
 *   fairness assumption (weak fairness would hide exactly those runs), and a call that never ends also shows as an
 *   invalid end state (its caller blocked outside an end label) in every safety run.
 *
 * Properties (check.sh):
 *   no deadlock         no invalid end state, in runs without any deadline (-DNO_TIMEOUTS: a wait may not need one)
 *   depth bounded       at each activation: depth <= DMAX, and no agent twice in the chain
 *   a call always ends  ltl "ends": every call is eventually answered (completes, times out, is stopped or
 *                       refused) and every task's call has its result
 *   one activation      a call's callee frame is activated at most once, over every process lifetime
 *   the cap             at most CAP callees of a target run at once
 * Reachability witnesses (-DWITNESS=<branch>, see REACHED) show that the bounds take every branch that matters.
 *
 * Planted bugs (each must be refuted by spin):
 *   -DNO_DEADLOCK_CHECK  the limiter queues a wait that can never be granted (CallLimiter.deadlock skipped)
 *   -DNO_DEPTH_RULE      checkCallRules does not check the depth
 *   -DNO_CYCLE_RULE      checkCallRules does not check the chain (run with CAP=2: at CAP=1 the limiter refuses it)
 *   -DWAIT_FOR_CALLEE    the caller waits for its callee to stop instead of answering at the deadline
 *   -DDEADLINE_AFTER_SLOT  the deadline starts once a slot is granted: a wait in the queue has none
 *   -DRECALL_ON_RESTART  call_agent is treated as idempotent: a restart runs an interrupted call again
 *   -DSHARED_JOURNAL     a batch run commits through its caller's journal (the bug soak seeds 817 and 1440 found):
 *                        a callee whose caller gave up can commit the caller's cleared mark before its result
 *   -DRELEASE_ON_ANSWER  the slot is given back when the caller stops waiting, not when the callee stops
 */

#ifndef NS
#define NS 1          /* chat sessions (1 or 2) */
#endif
#ifndef NT
#define NT 3          /* agents that can be called, 1 .. NT (0 is main); 2 or 3 */
#endif
#ifndef DMAX
#define DMAX 2        /* AGENT_CALL_DEPTH_MAX: frames below main; less than NT, so that the rule matters */
#endif
#ifndef CAP
#define CAP 1         /* AGENT_CONCURRENT_CALLS_MAX: slots per target */
#endif
#ifndef QMAX
#define QMAX 1        /* AGENT_CALL_QUEUE_MAX: waiters per target */
#endif
#ifndef MAXCRASH
#define MAXCRASH 1
#endif
#ifndef MAXCANCEL
#define MAXCANCEL 1
#endif

#if QMAX > 0
#define QCAP QMAX
#else
#define QCAP 1
#endif

/* Depths 0 (main) .. NT: with the chain rule no chain is longer, whatever the depth rule says; and one more
 * for the call a frame at depth NT makes (always refused). */
#define ND (NT + 2)
#define NK (NS * ND)
/* The call that activates session s's frame at depth d (d >= 1): one per depth, as each frame makes one call. */
#define KEY(s, d) ((s) * ND + (d))

/* a call's state */
#define IDLE    0
#define WAITING 1     /* in the target's queue */
#define RUNNING 2     /* holds a slot; its callee runs (or is about to) */
#define ENDED   3     /* the caller has its answer: the callee's result or error, "timed out", "was stopped",
                       * or a refusal ("cycle detected", "call depth limit", "target busy") */

/* ---- the process's memory: lost in a crash ---- */
byte epoch = 0;               /* which process lifetime; a process of an older one does nothing more */
byte holders[NT + 1];         /* slots held per target (CallLimiter.holders) */
chan queue[NT + 1] = [QCAP] of { byte };   /* waiters per target, oldest first (CallLimiter.waiting) */
byte cst[NK];                 /* each call's state */
bool holding[NK];             /* the call holds a slot of its target (its lease, not yet given back) */
bool fired[NK];               /* the call's deadline passed */
bool calleeDone[NK];          /* the call's callee has stopped */
byte target[NK];
bool cancelled[NS];           /* /cancel aborted the session's running turn */
#ifdef SHARED_JOURNAL
bool memMarker[NS];           /* main's frame in memory: its runningToolUseId, and its call's tool_result */
bool memResult[NS];
#endif

/* ---- the database ---- */
bool marker[NS];              /* main's call: "tool about to run" committed */
bool result[NS];              /* main's call: its tool_result committed */

/* ---- the checker's bookkeeping ---- */
byte activations[NK];         /* how often each call's callee frame was activated, over every lifetime */
byte running[NT + 1];         /* callees of each target that have not stopped */
byte crashes = 0;
byte cancels = 0;

/* scratch for the d_steps (always reset to 0 at their end, so it adds no states) */
byte i, h, w;
bool changed, found;
bool stuck[NK];
bool allStuck[NT + 1];

/*
 * Reachability witnesses (check.sh): built with -DWITNESS=<name>, the model asserts that the branch of that name
 * is never taken, and spin must refute it, so a branch the bounds no longer reach is noticed.  Otherwise nothing.
 */
#ifdef WITNESS
bool cycle_refused, depth_refused, stopped_before_acquire, queue_full, deadlock_refused, granted_from_queue,
     wait_timed_out, timed_out_running, cancel_stops_call, recovery_rule;    /* the one named is set by init */
#define REACHED(name, cond) assert(!((cond) && name));
#else
#define REACHED(name, cond)
#endif

#define PENDING(k) (cst[k] == WAITING || cst[k] == RUNNING)

/* The signal of session s's frame at depth d: the task's own (a cancel) and the deadline of every call above it. */
#if NT >= 3
#define ABORTED(s, d) (cancelled[s] || ((d) >= 1 && fired[KEY(s, 1)]) || ((d) >= 2 && fired[KEY(s, 2)]) || ((d) >= 3 && fired[KEY(s, 3)]))
#define PENDING_BELOW(s) (PENDING(KEY(s, 1)) || PENDING(KEY(s, 2)) || PENDING(KEY(s, 3)))
#else
#define ABORTED(s, d) (cancelled[s] || ((d) >= 1 && fired[KEY(s, 1)]) || ((d) >= 2 && fired[KEY(s, 2)]))
#define PENDING_BELOW(s) (PENDING(KEY(s, 1)) || PENDING(KEY(s, 2)))
#endif

/* checkCallRules: the target already in the chain, or the new frame deeper than DMAX */
#ifdef NO_CYCLE_RULE
#define IN_CHAIN(ch, t) false
#else
#define IN_CHAIN(ch, t) (((ch) >> (t)) & 1)
#endif
#ifdef NO_DEPTH_RULE
#define TOO_DEEP(d) false
#else
#define TOO_DEEP(d) ((d) + 1 > DMAX)
#endif

/* The lease is given back (once): the slot passes straight to the oldest waiter, or is freed. */
inline release(k, t) {
  if
  :: holding[k] ->
     holding[k] = false; target[k] = 0;
     if
     :: nempty(queue[t]) -> queue[t]?w; holding[w] = true; w = 0
     :: empty(queue[t]) -> holders[t]--
     fi
  :: else -> skip
  fi
}

/*
 * CallLimiter.deadlock for a caller of session s at depth d asking for t: every holder of t ends up waiting for
 * the caller's own slots.  A holder is stuck when it is one of the caller's slots (its calls at depths 1 .. d), or
 * when a call inside it (same session, deeper) waits for a target whose holders are all stuck; the greatest such
 * set (a holder met again on the way counts as stuck).  Sets `found`.
 */
inline deadlocked(s, d, t) {
  i = 0;
  do
  :: i < NK -> stuck[i] = holding[i]; i++
  :: else -> break
  od;
  changed = true;
  do
  :: changed ->
     changed = false;
     i = 1;
     do
     :: i <= NT -> allStuck[i] = (holders[i] >= CAP); h = 0;
        do
        :: h < NK -> allStuck[i] = allStuck[i] && !(holding[h] && target[h] == i && !stuck[h]); h++
        :: else -> break
        od;
        i++
     :: else -> break
     od;
     h = 0;
     do
     :: h < NK ->
        if
        :: stuck[h] && !(h / ND == s && h % ND <= d) ->
           found = false; w = 0;
           do
           :: w < NK -> found = found || (cst[w] == WAITING && w / ND == h / ND && w % ND > h % ND && allStuck[target[w]]); w++
           :: else -> break
           od;
           if
           :: !found -> stuck[h] = false; changed = true
           :: else -> skip
           fi
        :: else -> skip
        fi;
        h++
     :: else -> break
     od
  :: else -> break
  od;
  found = (d >= 1 && allStuck[t]);
  i = 0; h = 0; w = 0; changed = false;
  do
  :: i < NK -> stuck[i] = false; i++
  :: else -> break
  od;
  i = 1;
  do
  :: i <= NT -> allStuck[i] = false; i++
  :: else -> break
  od;
  i = 0
}

#ifdef SHARED_JOURNAL
/* The planted bug: a commit of a batch run also writes what its session's main frame has in memory. */
#define CALLEE_COMMIT(s) atomic { marker[s] = memMarker[s]; result[s] = result[s] || memResult[s] };
#else
/* A batch run commits its own rows only: nothing of the properties' state (so no step at all here). */
#define CALLEE_COMMIT(s)
#endif

/* What a callee does, chosen when it is activated: answer, call agent `plan` (1 .. NT), or hang. */
#define ANSWERS 0
#define HANGS   (NT + 1)

/* runBatch: the callee frame of call k is activated, in the step that gave the call its slot. */
inline activate(s, d, ch) {
  activations[k]++; running[t]++;
  assert(activations[k] <= 1);            /* at most one activation of a call's frame */
  assert(d + 1 <= DMAX);                  /* the depth bound */
  assert(!((ch >> t) & 1));               /* no agent twice in a chain */
  assert(running[t] <= CAP);              /* the per-target cap */
  if
  :: plan = ANSWERS
  :: plan = 1
  :: plan = 2
#if NT >= 3
  :: plan = 3
#endif
#ifndef NO_TIMEOUTS
  :: plan = HANGS
#endif
  fi;
  run Callee(s, d + 1, t, ch | (1 << t), plan);
  plan = 0
}

/*
 * call_agent, first part (inside the caller's atomic step): checkCallRules, the deadline, CallLimiter.acquire,
 * for session s's frame at depth d (chain ch) calling agent t.  `k` (the call: KEY(s, d + 1)), `t` and `plan`
 * are the caller's locals.
 */
inline acquire(s, d, ch) {
  k = KEY(s, d + 1);
  if
  :: IN_CHAIN(ch, t) -> REACHED(cycle_refused, true) cst[k] = ENDED          /* "cycle detected: a → b → a" */
  :: !IN_CHAIN(ch, t) && TOO_DEEP(d) -> REACHED(depth_refused, true) cst[k] = ENDED   /* "call depth limit" */
  :: else ->
     if
     :: ABORTED(s, d) -> REACHED(stopped_before_acquire, true) cst[k] = ENDED  /* the caller's own signal: "was stopped" */
     :: !ABORTED(s, d) && holders[t] < CAP ->
        holders[t]++; holding[k] = true; target[k] = t; cst[k] = RUNNING; activate(s, d, ch)
     :: !ABORTED(s, d) && holders[t] >= CAP && len(queue[t]) >= QMAX ->
        REACHED(queue_full, true) cst[k] = ENDED                           /* "target busy: … are waiting" */
     :: !ABORTED(s, d) && holders[t] >= CAP && len(queue[t]) < QMAX ->
#ifdef NO_DEADLOCK_CHECK
        found = false;
#else
        deadlocked(s, d, t);
#endif
        if
        :: found -> REACHED(deadlock_refused, true) cst[k] = ENDED; found = false   /* "waiting would deadlock" */
        :: else -> queue[t]!k; target[k] = t; cst[k] = WAITING
        fi
     fi
  fi
}

#ifdef DEADLINE_AFTER_SLOT
#define WAIT_ABORTED(s, d) ABORTED(s, d)
#else
#define WAIT_ABORTED(s, d) ABORTED(s, d + 1)
#endif
#ifdef WAIT_FOR_CALLEE
#define RACE_OVER(s, d) calleeDone[k]
#else
#define RACE_OVER(s, d) (calleeDone[k] || ABORTED(s, d + 1))
#endif
#ifdef RELEASE_ON_ANSWER
#define ANSWERED_RELEASE release(k, t)
#else
#define ANSWERED_RELEASE skip
#endif

/*
 * call_agent, second part: the wait for a slot (granted by a release, or the call's signal aborts first), then
 * Promise.race between the callee's end and the call's signal.  Ends when the caller has its answer.
 */
inline await(s, d, ch) {
  do
  :: atomic { cst[k] == WAITING && holding[k] -> REACHED(granted_from_queue, true) cst[k] = RUNNING; activate(s, d, ch) }
  :: atomic {
       cst[k] == WAITING && !holding[k] && WAIT_ABORTED(s, d) ->   /* "timed out … waiting for a free slot" */
       REACHED(wait_timed_out, fired[k])
       queue[t]??eval(k); target[k] = 0; cst[k] = ENDED; break
     }
  :: atomic {
       cst[k] == RUNNING && RACE_OVER(s, d) ->                    /* the callee's answer, "timed out", "was stopped" */
       REACHED(timed_out_running, !calleeDone[k] && fired[k])
       REACHED(cancel_stops_call, !calleeDone[k] && cancelled[s])
       cst[k] = ENDED; calleeDone[k] = false; ANSWERED_RELEASE; break
     }
  :: cst[k] == ENDED -> break                                    /* refused at once */
  od
}

/* The callee stops: its caller hears of it (if still waiting), its slot goes to the next waiter. */
inline stop_callee(s, d, a) {
  d_step {
    calleeDone[KEY(s, d)] = (cst[KEY(s, d)] == RUNNING);   /* only a caller still waiting needs to know */
    running[a]--;
    release(KEY(s, d), a);
    k = 0; t = 0
  }
}

/* A callee: session s's batch frame at depth d, agent a, chain ch, doing `plan`. */
proctype Callee(byte s; byte d; byte a; byte ch; byte plan) {
  byte me = epoch;
  byte k, t;
  {
    CALLEE_COMMIT(s)                           /* runToCompletion: the run's start is committed at once */
    if
    :: plan == ANSWERS -> stop_callee(s, d, a) /* a text reply, complete, report_back */
    :: plan != ANSWERS && plan != HANGS ->
       CALLEE_COMMIT(s)                        /* the "tool about to run" mark of its own call */
       atomic { t = plan; plan = 0; acquire(s, d, ch) };
       await(s, d, ch);
       CALLEE_COMMIT(s)                        /* its call's result; then it answers */
       stop_callee(s, d, a)
#ifndef NO_TIMEOUTS
    :: plan == HANGS ->
end_hung:                                      /* a tool that ignores the abort and never returns */
       false
#endif
    fi
  } unless { epoch != me }
}

/* Main's call_agent and its step 2: the result and the cleared mark, in one commit. */
inline main_call(s) {
  if
  :: t = 1
  :: t = 2
#if NT >= 3
  :: t = 3
#endif
  fi;
  acquire(s, 0, 1)
}

inline main_done(s) {
#ifdef SHARED_JOURNAL
  memMarker[s] = false;                        /* runTool clears the mark in memory ... */
  memResult[s] = true;                         /* ... then the tool_result is appended */
#endif
  d_step { marker[s] = false; result[s] = true; k = 0; t = 0 }
}

/* Session s's main agent: one call_agent call, resumed from what is committed after a restart. */
proctype Main(byte s) {
  byte me = epoch;
  byte k, t, plan;
  {
#ifdef SHARED_JOURNAL
    d_step { memMarker[s] = marker[s]; memResult[s] = result[s] };
#endif
    if
    :: result[s] -> skip                       /* the call has its result: the task goes on from there */
#ifdef RECALL_ON_RESTART
    :: atomic { !result[s] && marker[s] -> main_call(s) }; await(s, 0, 1); main_done(s)   /* the planted bug: calls again */
#else
    /* the recovery rule: "interrupted by a restart; it may or may not have run", not run again */
    :: d_step { !result[s] && marker[s] -> REACHED(recovery_rule, true) marker[s] = false; result[s] = true }
#endif
    :: atomic {
         !result[s] && !marker[s] ->
         marker[s] = true;                     /* step 1: the mark, committed before the tool runs */
#ifdef SHARED_JOURNAL
         memMarker[s] = true;
#endif
         main_call(s)
       };
       await(s, 0, 1);
       main_done(s)
    fi
  } unless { epoch != me }
}

#ifndef NO_TIMEOUTS
#ifdef DEADLINE_AFTER_SLOT
#define CAN_FIRE(k) (cst[k] == RUNNING && !fired[k])
#else
#define CAN_FIRE(k) (PENDING(k) && !fired[k])
#endif
/* Time passes: a pending call's deadline may pass at any moment. */
proctype Time() {
end_time:
  do
  :: CAN_FIRE(KEY(0, 1)) -> fired[KEY(0, 1)] = true
  :: CAN_FIRE(KEY(0, 2)) -> fired[KEY(0, 2)] = true
#if NT >= 3
  :: CAN_FIRE(KEY(0, 3)) -> fired[KEY(0, 3)] = true
#endif
#if NS >= 2
  :: CAN_FIRE(KEY(1, 1)) -> fired[KEY(1, 1)] = true
  :: CAN_FIRE(KEY(1, 2)) -> fired[KEY(1, 2)] = true
#if NT >= 3
  :: CAN_FIRE(KEY(1, 3)) -> fired[KEY(1, 3)] = true
#endif
#endif
  od
}
#endif

inline start_sessions() {
  run Main(0);
#if NS >= 2
  run Main(1)
#endif
}

/* Bounded faults, at any moment; Faults may also stop (so fairness never forces a fault). */
proctype Faults() {
end_faults:
  do
  :: cancels < MAXCANCEL && !result[0] -> cancelled[0] = true; cancels++
#if NS >= 2
  :: cancels < MAXCANCEL && !result[1] -> cancelled[1] = true; cancels++
#endif
  :: crashes < MAXCRASH ->
     /* SIGKILL and a restart: memory is lost (the limiter, every run, every deadline); the database stays */
     atomic {
       d_step {
         crashes++;
         epoch++;
         i = 0;
         do
         :: i < NK -> cst[i] = IDLE; holding[i] = false; fired[i] = false; calleeDone[i] = false; target[i] = 0; i++
         :: else -> break
         od;
         i = 1;
         do
         :: i <= NT ->
            holders[i] = 0; running[i] = 0;
            do
            :: nempty(queue[i]) -> queue[i]?w
            :: empty(queue[i]) -> break
            od;
            i++
         :: else -> break
         od;
         i = 0; w = 0;
         cancelled[0] = false;
#if NS >= 2
         cancelled[1] = false
#endif
       };
       start_sessions()
     }
  :: break
  od
}

/* The sessions first: time and faults act on a process that has started. */
init {
  atomic {
#ifdef WITNESS
    WITNESS = true;
#endif
    start_sessions();
#ifndef NO_TIMEOUTS
    run Time();
#endif
    run Faults()
  }
}

#if NS >= 2
#define CALLS_PENDING (PENDING_BELOW(0) || PENDING_BELOW(1))
#define TASKS_DONE (result[0] && result[1])
#else
#define CALLS_PENDING PENDING_BELOW(0)
#define TASKS_DONE result[0]
#endif

/* A call always ends (completes, times out, is stopped or refused), and so every task's call has its result. */
ltl ends { <> [] (!CALLS_PENDING && TASKS_DONE) }
