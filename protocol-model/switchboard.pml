/*
 * Switchboard: the multi-replica lease / fencing / outbox protocol of one chat session.
 *
 * Checked by model/check.sh; what each element stands for in the code is in docs/engineering/protocol-model.md.
 *
 *   NR replicas run the session worker (SessionWorkers.work) for one session that receives NREQ requests (in order).
 *   Every database statement (acquireLease, renewLease, releaseLease, a fenced step commit, claimNextOutbound)
 *   is one atomic block: one transaction.  Everything a replica does between two statements may interleave
 *   with anything else, and a replica may be paused there for as long as the others like.
 *
 *   Environment:
 *     World   - accepts the requests (request 1 after request 0) and expires the lease of a crashed holder
 *               (time passes).  Weakly fair: it always does what it can eventually.
 *     Faults  - at most MAXEXP premature expiries (the holder is alive but paused / GC'd / partitioned and
 *               does not know) and at most MAXCRASH crashes (SIGKILL; the replica stops forever, its lease is
 *               not released).  It may stop injecting faults at any time.
 *
 * Planted bugs (each must be refuted by spin):
 *   -DNO_FENCE       step commits skip the fencing-token check (StepCommit.fence ignored)
 *   -DDOUBLE_CLAIM   the outbox claim reads "undelivered" and marks "delivered" in two statements (no CAS)
 *   -DNO_RECOVERY    a replica that finds the "tool about to run" marker runs the tool again
 *   -DNO_TTL         a crashed holder's lease never runs out: liveness (not safety) must fail
 *   -DUNBOUNDED_EXPIRY  premature expiries are not bounded: the replicas can steal the lease from each other
 *                    forever (not run by check.sh: the token then grows without bound; see the doc)
 *   -DEFFECTS_ONLY   (for the planted runs) check only the external-effect assertions (ledger, sent), so
 *                    the trail shows the effect happening twice, not only the earlier bookkeeping assertion
 *
 * Bounds (overridable with -D): NR replicas, MAXEXP premature expiries, MAXCRASH crashes.  NREQ is 2.
 */

#ifndef NR
#define NR 2
#endif
#ifndef MAXEXP
#define MAXEXP 2
#endif
#ifndef MAXCRASH
#define MAXCRASH 1
#endif
#define NREQ 2

#define NONE 255

/* request status (requests.status); NOTYET = not accepted yet */
#define NOTYET  0
#define PENDING 1
#define RUNNING 2
#define DONE    3

/* tool result of a request */
#define NORESULT    0
#define RAN         1   /* the tool's own result */
#define INTERRUPTED 2   /* "interrupted, may or may not have run" (the recovery rule) */

/* outbox row of a request's reply */
#define NOROW     0
#define UNDELIV   1
#define CLAIMED   2     /* delivered := true, by exactly one claimer */

/* ---- the database ---- */
byte holder = NONE;       /* leases.holder */
byte token = 0;           /* leases.token: the fencing token */
bool live = false;        /* leases.expires_at > now, and not released */

byte status[NREQ];        /* requests.status */
bool marker[NREQ];        /* the frame's runningToolUseId: "tool about to run" committed, no result yet */
byte result[NREQ];        /* the tool_result row */
byte out[NREQ];           /* outbox row (one reply per request) */

/* ---- the outside world and the checker's bookkeeping (not in the database) ---- */
byte ledger[NREQ];        /* how often the side-effecting tool really ran */
byte sent[NREQ];          /* how often the platform showed the reply */
byte applied[2 * NREQ];   /* applied[2*r + s]: how often step s (0 = step 1, 1 = step 2) of request r committed */

bool crashed[NR];
byte crashes = 0;
byte expiries = 0;

#ifdef NO_FENCE
#define FENCE_OK (true)
#else
#define FENCE_OK (token == tok)
#endif

#ifdef EFFECTS_ONLY
#define CHECK_STEP(x) skip
#else
#define CHECK_STEP(x) assert(x)
#endif

#define UNFINISHED(r) (status[r] == PENDING || status[r] == RUNNING)
/* orphanedSessions / a notification: unfinished requests or undelivered replies */
#define WORK (UNFINISHED(0) || UNFINISHED(1) || out[0] == UNDELIV || out[1] == UNDELIV)

#define ALL_DONE (status[0] == DONE && status[1] == DONE)
#define ALL_CLAIMED (out[0] == CLAIMED && out[1] == CLAIMED)

/* Property 1, at the point a step commit succeeded: it carried the current token, held by the committer
 * (and since the token never goes back, successful commits carry non-decreasing tokens); and no step of a
 * request is applied twice. */
inline committed(step) {
  CHECK_STEP(token == tok && holder == me);
  applied[2 * r + step]++;
  CHECK_STEP(applied[2 * r + step] <= 1)
}

/* The turn ends (FencedError, or a failed renew): nothing was written; another replica has the session.
 * The worker stops; the replica goes back to waiting for wake-ups. */
#define ABORT_TURN  tok = 0; r = 0; m = false; goto end_idle

/* Store.renewLease(key, me, tok): extends the lease iff it still carries tok for me (expired or not);
 * a failed renew ends the turn. */
#define RENEW_OR_ABORT \
    if \
    :: holder == me && token == tok -> live = true \
    :: else -> ABORT_TURN \
    fi

/* Outbox: claim (Store.claimNextOutbound) and send, oldest first, until nothing is left. */
inline deliver() {
  do
  ::
#ifdef DOUBLE_CLAIM
     /* SELECT the oldest undelivered row ... */
     atomic {
       if
       :: out[0] == UNDELIV -> c = 0
       :: out[0] != UNDELIV && out[1] == UNDELIV -> c = 1
       :: else -> break
       fi
     };
     /* ... and, in a second statement, UPDATE it delivered (whatever it is by now) */
     out[c] = CLAIMED;
#else
     /* UPDATE outbound SET delivered = true WHERE id = (the oldest with delivered = false
      * FOR UPDATE SKIP LOCKED) RETURNING ...: a compare-and-set, one statement */
     atomic {
       if
       :: out[0] == UNDELIV -> c = 0
       :: out[0] != UNDELIV && out[1] == UNDELIV -> c = 1
       :: else -> break
       fi;
       out[c] = CLAIMED
     };
#endif
     /* sink.deliver: the platform shows the reply (a crash just before this loses it: at most once) */
     d_step {
       sent[c]++;
       assert(sent[c] <= 1);               /* property 3 */
       c = 0
     }
  od
}

active [NR] proctype Replica() {
  byte me = _pid;       /* Replica is declared first: pids 0 .. NR-1 */
  byte tok;             /* the fencing token this worker holds (0: no worker running) */
  byte r;               /* the request being worked on */
  bool m;               /* what this worker read: the marker of r */
  byte c;               /* the reply being delivered */

  {
end_idle:
    do
    :: atomic {
         /* a wake-up (NOTIFY, or the orphanedSessions poll) starts a session worker ... */
         WORK ->
         /* ... Store.acquireLease(key, me, ttl): granted if nobody holds a live lease, or I do */
         if
         :: holder == NONE || !live || holder == me ->
            if
            :: holder != me -> token++
            :: else -> skip
            fi;
            holder = me; live = true; tok = token
         :: else -> goto end_idle     /* another replica's lease is live: give up */
         fi
       };
next_request:
       /* the oldest unfinished request and its frame: a read, which may be stale by the time it is used */
       atomic {
         if
         :: UNFINISHED(0) -> r = 0
         :: !UNFINISHED(0) && UNFINISHED(1) -> r = 1
         :: else -> goto release
         fi;
#ifdef NO_RECOVERY
         m = false
#else
         m = marker[r]
#endif
       };
       if
       :: atomic {
            !m ->
            /* step 1: Store.commit({ request running, frame.runningToolUseId, fence }) */
            if
            :: FENCE_OK ->
               status[r] = RUNNING; marker[r] = true;
               committed(0)
            :: else -> ABORT_TURN              /* FencedError */
            fi
          };
          /* the side-effecting tool runs: an effect outside the database */
          d_step {
            ledger[r]++;
            assert(ledger[r] <= 1)             /* property 2 */
          };
          /* between steps: renew */
          atomic { RENEW_OR_ABORT };
          /* step 2: Store.commit({ tool result, request done, outbound reply, fence }) */
          atomic {
            if
            :: FENCE_OK ->
               result[r] = RAN; marker[r] = false; status[r] = DONE; out[r] = UNDELIV;
               committed(1);
               r = 0; m = false
            :: else -> ABORT_TURN
            fi
          }
       :: atomic {
            m ->
            /* the recovery rule: the marker is committed but there is no result: the tool may or may not
             * have run.  It is not run again; step 2 commits the result "interrupted". */
            if
            :: FENCE_OK ->
               result[r] = INTERRUPTED; marker[r] = false; status[r] = DONE; out[r] = UNDELIV;
               committed(1);
               r = 0; m = false
            :: else -> ABORT_TURN
            fi
          }
       fi;
       /* between requests: renew (a lost lease ends the turn), next */
       atomic { RENEW_OR_ABORT; goto next_request };
release:
       /* no unfinished request left: deliver the replies */
       deliver();
       /* Store.releaseLease(key, me, tok): iff the lease still carries tok it is given up at once.
        * Then back to the top: re-check for work that came in while this worker held the lease. */
       atomic {
         if
         :: token == tok -> live = false
         :: else -> skip
         fi;
         tok = 0; r = 0; m = false;
         goto end_idle
       }
    od
  } unless {
    crashed[me] ->
      /* SIGKILL: this replica never runs again; its lease (if any) is not released */
      d_step { tok = 0; r = 0; m = false; c = 0 }
  }
}

/* Users and time: always eventually do what they can (weak fairness). */
active proctype World() {
end_world:
  do
  :: status[0] == NOTYET -> status[0] = PENDING            /* request 0 accepted (insertRequest + NOTIFY) */
  :: status[0] != NOTYET && status[1] == NOTYET -> status[1] = PENDING
#ifndef NO_TTL
  :: live && holder != NONE && crashed[holder] -> live = false   /* a dead holder's lease runs out */
#endif
  od
}

/* Bounded faults, at any moment; Faults may also stop (so fairness never forces a fault). */
active proctype Faults() {
  byte i;
end_faults:
  do
  :: expiries < MAXEXP && live && holder != NONE && !crashed[holder] ->
     /* the holder is paused / GC'd / partitioned past its ttl: the lease expires behind its back */
#ifdef UNBOUNDED_EXPIRY
     live = false
#else
     d_step { live = false; expiries++ }
#endif
  :: crashes < MAXCRASH ->
     /* SIGKILL of a replica that is still alive */
     atomic {
       select(i : 0 .. NR - 1);
       if
       :: !crashed[i] -> crashed[i] = true; crashes++
       :: else -> skip
       fi;
       i = 0
     }
  :: break
  od
}

/* Property 4: every accepted request is eventually done, and property 5: every reply is eventually claimed for
 * delivery (and sent, unless its claimer crashed in between) - while at least one replica stays alive.
 * Both predicates are stable (DONE and CLAIMED are never undone), so <>(A && B) is <>A && <>B: check.sh
 * checks both with the one claim "liveness"; "done" and "claimed" are the halves, for diagnosis. */
ltl liveness { <> (ALL_DONE && ALL_CLAIMED) }
ltl done { <> ALL_DONE }
ltl claimed { <> ALL_CLAIMED }
