// Several replicas on one PostgreSQL: real `npm start` processes (node --import tsx src/main.ts), the real SDK
// against the strict fake Messages API, the HTTP API as the door, a ledger standing for a side-effecting
// service. Conversations are spread across the replicas, one is SIGKILLed while it runs a turn, and the end
// state is checked: every message answered once, no reply doubled, the booking made at most once, every
// replica telling the same story.
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { clientConfig } from "../../src/store/postgres/connection.js";
import { ChangeListener } from "../../src/store/postgres/listener.js";
import {
  lastUserText,
  reply,
  startFakeAnthropic,
  systemText,
  text,
  toolUse,
  type FakeAnthropic,
  type FakeReply,
  type MessagesRequest,
} from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { writeDefinitions } from "../helpers/harness.js";
import { adminQuery, describeIfPostgres, freshDatabase, type FreshDatabase } from "../helpers/postgres.js";
import { api, BOB, leaseHolder as holderOf, say, startReplica, type Replica } from "./replica.js";

let fake: FakeAnthropic;
let ledger: Server;
let ledgerUrl = "";
const bookings = new Map<string, number>();
let holdNextBooking: (() => void) | null = null;
let db: FreshDatabase;
let listener: ChangeListener;
const doneWaiters = new Map<string, () => void>();
const doneSeen = new Set<string>();
const replicas: Replica[] = [];
let defs: ReturnType<typeof writeDefinitions>;
/** A user message the fake model holds: `reached` when its call arrives, answered once `open` resolves. */
const gates = new Map<string, { reached: () => void; open: Promise<void> }>();

/** The model: main hands over to the interview skill, which books through http_request (approval needed). */
async function model(req: MessagesRequest): Promise<FakeReply> {
  const system = systemText(req);
  const last = req.messages[req.messages.length - 1]!;
  const results = Array.isArray(last.content) ? (last.content as Array<{ type: string; content?: unknown }>).filter((b) => b.type === "tool_result") : [];
  const said = lastUserText(req);
  const gate = gates.get(said);
  if (gate) {
    gates.delete(said);
    gate.reached();
    await gate.open;
  }
  if (system.includes('skill "interview"')) {
    if (results.length > 0) return reply(toolUse("complete", { result: `booking: ${String(results[0]!.content).slice(0, 60)}` }));
    if (said.startsWith("Lisbon")) return reply(toolUse("http_request", { method: "POST", url: ledgerUrl, body: `booking for ${said}` }));
    return text("Where to?");
  }
  if (results.length > 0) return text("Booked.");
  if (said.startsWith("question")) return text(`answer to ${said}`);
  return reply(toolUse("use_skill", { name: "interview", message: "ask where to go" }));
}

/** Resolves when any replica commits the end of `requestId` (read from the change feed, as replicas hear it). */
function requestDone(requestId: string): Promise<void> {
  if (doneSeen.has(requestId)) return Promise.resolve();
  return new Promise((resolve) => doneWaiters.set(requestId, resolve));
}

/** The replica that holds a session's lease now. */
const leaseHolder = (sessionKey: string) => holderOf(db, replicas, sessionKey);

describeIfPostgres("replicas on one PostgreSQL", () => {
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    fake.fallback(model);
    ledger = createServer((req, res) => {
      let body = "";
      req.on("data", (c: Buffer) => (body += c.toString()));
      req.on("end", () => {
        bookings.set(body, (bookings.get(body) ?? 0) + 1);
        if (holdNextBooking) {
          const hit = holdNextBooking;
          holdNextBooking = null;
          hit();
          return; // never answered: the replica running the tool dies first
        }
        res.writeHead(201).end("booked");
      });
    });
    await new Promise<void>((r) => ledger.listen(0, "127.0.0.1", r));
    ledgerUrl = `http://127.0.0.1:${(ledger.address() as { port: number }).port}/book`;
    db = await freshDatabase();
    // The feed as a replica hears it: notifications name rows of change_feed, read by the application's role.
    listener = new ChangeListener(clientConfig(db.url), silentLogger());
    await listener.start();
    listener.watch((change) => {
      if (change.kind !== "done") return;
      doneSeen.add(change.requestId);
      doneWaiters.get(change.requestId)?.();
    });
    defs = writeDefinitions({ "skills/interview/SKILL.md": "---\nname: interview\ndescription: Plans trips.\n---\nAsk, then book.\n" });
    // Three replicas starting at once migrate the schema once, under the advisory lock.
    replicas.push(...(await Promise.all(["a", "b", "c"].map((name) => startReplica(name, { modelUrl: fake.url, db, defs })))));
  }, 60_000);

  afterAll(async () => {
    for (const r of replicas) r.proc.child.kill("SIGKILL");
    await Promise.all(replicas.map((r) => r.proc.exited));
    await listener?.close();
    ledger?.closeAllConnections();
    ledger?.close();
    await fake?.close();
    await db?.drop();
  });

  it("answers health and readiness checks without authentication on every replica", async () => {
    for (const r of replicas) {
      expect((await fetch(`${r.base}/healthz`)).status).toBe(200);
      const ready = await fetch(`${r.base}/readyz`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { checks: Record<string, string> }).checks.database).toBe("ok");
    }
    const versions = await adminQuery<{ version: number }>(db, "SELECT version FROM schema_migrations ORDER BY version");
    expect(versions.rows.map((r) => r.version)).toEqual([...new Set(versions.rows.map((r) => r.version))]);
  });

  it("carries one conversation across three replicas: a nested skill on A, its answer on B, the approval on C", async () => {
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    const first = await say(a, undefined, "plan a trip");
    expect(first).toMatchObject({ agent: "skill:interview", text: "Where to?", status: "waiting_user" });
    const session = String(first.session_id);
    const second = await say(b, session, "Lisbon (one)");
    const approvals = second.pending_approvals as Array<{ approval_id: string; tool: string }>;
    expect(approvals.map((p) => p.tool)).toEqual(["http_request"]);
    // Decided on C, streamed from C: the resumed turn runs wherever the lease is; C reads its events from the store.
    const decided = await api(c, `/v1/approvals/${approvals[0]!.approval_id}`, { decision: "approve" }, { accept: "text/event-stream" });
    const stream = await decided.text();
    expect(stream).toContain("event: done");
    expect(stream).toContain('"text":"Booked."');
    expect(bookings.get("booking for Lisbon (one)")).toBe(1);
    // Every replica tells the same story.
    const views = await Promise.all(replicas.map(async (r) => (await api(r, `/v1/tasks/${String(first.task_id)}`)).json()));
    expect(views[1]).toEqual(views[0]);
    expect(views[2]).toEqual(views[0]);
    expect(views[0]).toMatchObject({ status: "completed", result: "Booked.", stack: [] });
    // And the same refusals: another user gets 403 for the task and the session on every replica, never a 404.
    for (const r of replicas) {
      expect((await api(r, `/v1/tasks/${String(first.task_id)}`, undefined, {}, BOB)).status).toBe(403);
      expect((await api(r, `/v1/sessions/${session}`, undefined, {}, BOB)).status).toBe(403);
      expect((await api(r, "/v1/messages", { session_id: session, items: [{ content_type: "text", content: "mine now" }] }, {}, BOB)).status).toBe(403);
      expect((await api(r, `/v1/tasks/${String(first.task_id)}`, undefined, {}, "not-a-token")).status).toBe(401);
    }
  });

  it("answers a synchronous request on one replica while another runs the session's turn", async () => {
    const [a] = replicas as [Replica, Replica, Replica];
    const started = await say(a, undefined, "question zero");
    const session = String(started.session_id);
    const reached = deferred<void>();
    const open = deferred<void>();
    gates.set("question one", { reached: () => reached.resolve(), open: open.promise });
    const one = say(a, session, "question one");
    // Whichever replica won the lease holds it while its turn waits on the model; another takes the next message.
    await reached.promise;
    const running = await leaseHolder(`http:${session}`);
    expect(running, "a replica holds the session's lease").toBeDefined();
    const other = replicas.find((r) => r !== running)!;
    const two = say(other, session, "question two");
    open.resolve();
    expect((await one).text).toBe("answer to question one");
    expect((await two).text).toBe("answer to question two");
    // Once each: the model saw each question exactly one time, in order.
    const asked = fake
      .accepted()
      .map((r) => lastUserText(r))
      .filter((t) => t.startsWith("question"));
    expect(asked).toEqual(["question zero", "question one", "question two"]);
  });

  it("takes over from a replica SIGKILLed mid-turn: the booking is not made twice and the task finishes", async () => {
    const [a, b, c] = replicas as [Replica, Replica, Replica];
    const first = await say(b, undefined, "plan a trip");
    const session = String(first.session_id);
    const second = await say(c, session, "Lisbon (two)");
    const approval = (second.pending_approvals as Array<{ approval_id: string }>)[0]!.approval_id;
    const atLedger = new Promise<void>((resolve) => (holdNextBooking = resolve));
    const decided = (await (await api(a, `/v1/approvals/${approval}`, { decision: "approve" })).json()) as { request_id: string };
    await atLedger; // the tool's POST reached the ledger: the replica running it is mid-turn
    const victim = await leaseHolder(`http:${session}`);
    expect(victim, "a replica holds the session's lease").toBeDefined();
    victim!.proc.child.kill("SIGKILL");
    await victim!.proc.exited;
    replicas.splice(replicas.indexOf(victim!), 1);
    // Another replica takes the session over once the lease runs out, and finishes the turn from the last step.
    await requestDone(decided.request_id);
    const survivor = replicas[0]!;
    const task = (await (await api(survivor, `/v1/tasks/${String(first.task_id)}`)).json()) as {
      status: string;
      result: string;
      history: Array<{ type: string; result?: string }>;
    };
    expect(task.status).toBe("completed");
    expect(task.result).toBe("Booked.");
    // The tool was cut off mid-call: it is reported as "may or may not have run", never run again.
    expect(bookings.get("booking for Lisbon (two)")).toBe(1);
    const closed = task.history.find((h) => h.type === "agent_session_complete");
    expect(closed?.result).toMatch(/booking: .*interrupted/);
    // Every request of the session ended exactly once; no reply was committed twice.
    const requests = await adminQuery<{ status: string }>(db, "SELECT status FROM requests WHERE session_key = $1", [`http:${session}`]);
    expect(requests.rows.every((r) => r.status === "done")).toBe(true);
    const texts = await adminQuery<{ request_id: string; text: string; n: string }>(
      db,
      "SELECT request_id, text, count(*) AS n FROM outbox WHERE session_key = $1 GROUP BY request_id, text HAVING count(*) > 1",
      [`http:${session}`],
    );
    expect(texts.rows).toEqual([]);
    expect(fake.rejected()).toEqual([]);
  });
});
