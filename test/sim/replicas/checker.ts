import Database from "better-sqlite3";
import { toRecord, type StackFrame } from "../../../src/runtime/frame.js";
import { rebuildHistory } from "../../../src/runtime/history.js";
import type { Fence, FencedError, StepCommit, Store } from "../../../src/store/store.js";
import type { Outside } from "./script-model.js";

/** The session's lease as the database had it when a commit ran (read on a connection of the checker's own). */
export interface LeaseRow {
  holder: string;
  token: number;
  expiresAt: number;
}

/** One commit attempt, as the observer on a replica's store saw it. */
export interface CommitRecord {
  replica: string;
  sessionKey: string;
  /** The fence of the writer the step was committed through. */
  fence: Fence;
  /** The token the replica believed it held when it committed (its Leases), whatever the step carried. */
  believed: number | null;
  /** The lease row at the moment of the commit. */
  current: LeaseRow | null;
  ok: boolean;
  /** What the store threw when it refused the step. */
  error: FencedError | null;
  step: StepCommit;
}

interface Written {
  log: string[];
  outbound: Map<string, { requestId: string | null; text: string }>;
  requests: Map<string, string>;
}

/**
 * The invariants of the lease protocol. Every commit attempt of every replica is reported here the moment it
 * runs (`afterCommit`), and the end state once the scenario is idle (`atEnd`). Reports plain sentences; the
 * runner adds the seed and the replay command.
 */
export class ReplicaChecker {
  readonly violations: string[] = [];
  readonly commits: CommitRecord[] = [];
  private db: Database.Database | null = null;
  private readonly statements = new Map<string, Database.Statement>();
  /** Highest token of a successful commit per session (checker 1: tokens never go down). */
  private readonly lastToken = new Map<string, number>();
  /** Replicas whose commits the store accepted under each session's token (checker 2). */
  private readonly committers = new Map<string, Set<string>>();
  /** What successful commits wrote, per session, in order: the end state must be exactly this. */
  private readonly written = new Map<string, Written>();

  constructor(private readonly dbFile: string) {}

  /** A statement on the checker's own read-only connection, opened on first use (once a replica created the file). */
  private sql(text: string): Database.Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      this.db ??= new Database(this.dbFile, { readonly: true, fileMustExist: true });
      this.statements.set(text, (statement = this.db.prepare(text)));
    }
    return statement;
  }

  report(message: string): void {
    if (!this.violations.includes(message)) this.violations.push(message);
  }

  /** The lease row now (synchronous: called in the same tick as the commit it describes). */
  lease(key: string): LeaseRow | null {
    const row = this.sql(`SELECT holder, token, expires_at FROM leases WHERE key = ?`).get(key) as { holder: string; token: number; expires_at: number } | undefined;
    return row ? { holder: row.holder, token: Number(row.token), expiresAt: Number(row.expires_at) } : null;
  }

  requestStatus(id: string): string | null {
    return (this.sql(`SELECT status FROM requests WHERE id = ?`).get(id) as { status: string } | undefined)?.status ?? null;
  }

  afterCommit(record: CommitRecord): void {
    this.commits.push(record);
    const { replica, sessionKey: key, fence, current, step } = record;
    if (!record.ok) {
      // The store refused it: it must really have been stale.
      if (fence && current && fence.token === current.token && fence.holder === current.holder) {
        this.report(`fencing: ${key}: the store refused ${replica}'s step under the current token ${fence.token}`);
      }
      return;
    }
    const under = fence.token;
    // 1. A successful step was computed under the session's current lease, by its holder; tokens never go down.
    if (fence.holder !== replica) {
      this.report(
        `stale commit: ${replica} committed a step of ${key} under ${fence.holder}'s token ${fence.token} (it believed it held token ${record.believed ?? "none"}) while the lease was ${describe(current)}`,
      );
    } else if (!current || fence.token !== current.token || fence.holder !== current.holder) {
      this.report(`stale commit: ${replica} committed a step of ${key} under token ${fence.token} while the lease was ${describe(current)}`);
    }
    const before = this.lastToken.get(key) ?? 0;
    if (under < before) this.report(`stale commit: the tokens of ${key}'s commits went down, from ${before} to ${under} (${replica})`);
    this.lastToken.set(key, Math.max(before, under));
    // 2. Under any one token, only one replica's commits were accepted.
    if (current) {
      const tokenKey = `${key}#${current.token}`;
      const set = this.committers.get(tokenKey) ?? new Set<string>();
      set.add(replica);
      this.committers.set(tokenKey, set);
      if (set.size > 1) this.report(`one writer per token: commits of ${key} under token ${current.token} came from ${[...set].sort().join(" and ")}`);
    }
    const written = this.writtenTo(key);
    for (const row of step.log ?? []) written.log.push(`${row.type} ${JSON.stringify(row.payload)}`);
    for (const o of step.outbound ?? []) written.outbound.set(o.id, { requestId: o.requestId, text: o.text });
    for (const r of [...(step.request ? [step.request] : []), ...(step.requestsClosed ?? [])]) written.requests.set(r.id, r.status);
  }

  /**
   * 5. The stack a replica works from is the committed one: after each of its steps, its frames and their
   * histories in memory equal what the store rebuilds (what any other replica would load).
   */
  async afterStep(replica: string, key: string, frames: readonly StackFrame[], store: Pick<Store, "steps">): Promise<void> {
    const memory = serialize(frames);
    const stored = await store.steps.frames(key);
    const histories = await Promise.all(stored.map((f) => store.steps.history(key, f.agentSessionId)));
    const durable = serialize(stored.map((f, i) => ({ ...f, history: rebuildHistory(histories[i]!) })));
    if (memory === durable) return;
    const agent = frames.find((f, i) => serialize([f]) !== serialize(stored[i] ? [{ ...stored[i]!, history: rebuildHistory(histories[i]!) }] : []));
    const texts = (messages: StackFrame["history"]) => messages.flatMap((m) => m.content.flatMap((b) => (b.type === "text" ? [b.text] : [])));
    const missing = agent ? texts(rebuildHistory(histories[frames.indexOf(agent)] ?? [])).filter((t) => !texts(agent.history).includes(t)) : [];
    this.report(
      `stale stack: after ${replica}'s step, its stack of ${key} differs from the committed one` +
        (agent ? ` (${agent.agentName}'s history in memory lacks ${missing.length ? missing.map((t) => JSON.stringify(t)).join(", ") : "rows"} from the log)` : ""),
    );
  }

  /** Which replica claimed each reply for sending (delivery marks it before it is sent). */
  readonly claimedBy = new Map<string, string>();

  /**
   * Once every replica is idle (or dead). `crashed` names the replicas that died: a reply one of them claimed and
   * did not send before dying is not shown, by design (claimed before it is sent, so never shown twice).
   */
  atEnd(sessions: string[], outside: Outside, crashed: ReadonlySet<string> = new Set()): void {
    // 3. Every side effect ran at most once: per booking and per tool call.
    for (const [booking, n] of outside.bookings) if (n > 1) this.report(`side effects: "${booking}" was booked ${n} times`);
    for (const [use, n] of outside.runs) if (n > 1) this.report(`side effects: the tool call ${use} ran ${n} times`);
    const delivered = new Map<string, number>();
    for (const d of outside.delivered) delivered.set(d.id, (delivered.get(d.id) ?? 0) + 1);
    for (const key of sessions) {
      const requests = this.sql(`SELECT id, text, status FROM requests WHERE session_key = ? ORDER BY seq`).all(key) as Array<{
        id: string;
        text: string;
        status: string;
      }>;
      const log = this.sql(`SELECT type, payload FROM context_log WHERE session_key = ? ORDER BY seq`).all(key) as Array<{ type: string; payload: string }>;
      const outbox = this.sql(`SELECT id, request_id, text, kind, delivered_at FROM outbox WHERE session_key = ? ORDER BY seq`).all(key) as Array<{
        id: string;
        request_id: string | null;
        text: string;
        kind: string;
        delivered_at: number | null;
      }>;
      // 4. Nothing stuck; no reply committed twice for a request; every reply delivered exactly once.
      for (const r of requests) {
        if (r.status !== "done" && r.status !== "failed") this.report(`stuck: request ${r.id} ("${r.text}") of ${key} is still ${r.status}`);
        // Notices ("Interview skill finished.") go beside a request's reply; they are not a second answer.
        const replies = outbox.filter((o) => o.request_id === r.id && o.kind !== "notice");
        if (replies.length > 1)
          this.report(`reply twice: request ${r.id} of ${key} has ${replies.length} replies: ${replies.map((o) => JSON.stringify(o.text)).join(", ")}`);
        if (r.status === "done" && replies.length === 0) this.report(`stuck: request ${r.id} of ${key} is done without a reply`);
        const reached = log.filter((e) => e.type === "message" && userText(e.payload) === r.text).length;
        if (r.status === "done" && reached !== 1) this.report(`exactly once: "${r.text}" reached an agent ${reached} times`);
      }
      for (const o of outbox) {
        const n = delivered.get(o.id) ?? 0;
        const lostInCrash = n === 0 && o.delivered_at !== null && crashed.has(this.claimedBy.get(o.id) ?? "");
        if (n !== 1 && !lostInCrash) this.report(`delivery: reply ${o.id} of ${key} ("${o.text}") was shown ${n} times`);
      }
      // The state is exactly what the accepted commits wrote: nothing of a refused step is in the store.
      const written = this.writtenTo(key);
      const stored = log.map((e) => `${e.type} ${e.payload}`);
      const first = stored.findIndex((row, i) => row !== written.log[i]);
      if (stored.length !== written.log.length || first >= 0) {
        this.report(
          `state: the log of ${key} is not what the accepted commits wrote (${stored.length} rows stored, ${written.log.length} accepted; first difference at row ${first >= 0 ? first : Math.min(stored.length, written.log.length)})`,
        );
      }
      for (const o of outbox) if (!written.outbound.has(o.id)) this.report(`state: reply ${o.id} of ${key} is in the outbox, but no accepted commit wrote it`);
      for (const id of written.outbound.keys()) if (!outbox.some((o) => o.id === id)) this.report(`state: reply ${id} of ${key} was committed but is not in the outbox`);
      for (const [id, status] of written.requests) {
        const now = requests.find((r) => r.id === id)?.status;
        if (now !== status) this.report(`state: request ${id} of ${key} is ${now ?? "missing"}, but the last accepted commit made it ${status}`);
      }
    }
  }

  private writtenTo(key: string): Written {
    let written = this.written.get(key);
    if (!written) this.written.set(key, (written = { log: [], outbound: new Map(), requests: new Map() }));
    return written;
  }

  close(): void {
    this.db?.close();
  }
}

function serialize(frames: ReadonlyArray<StackFrame>): string {
  return JSON.stringify(frames.map((f) => ({ ...toRecord(f), history: f.history })));
}

function describe(lease: LeaseRow | null): string {
  return lease ? `${lease.holder}'s, token ${lease.token}` : "nobody's";
}

function userText(payload: string): string | null {
  const p = JSON.parse(payload) as { role?: string; content?: Array<{ type: string; text?: string }> };
  return p.role === "user" && p.content?.[0]?.type === "text" ? (p.content[0].text ?? null) : null;
}
