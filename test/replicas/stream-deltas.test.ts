// Deltas across replicas: two real `npm start` processes on one PostgreSQL, the HTTP API on each. A client streams
// (Accept: text/event-stream) a message it posts to one replica, the door, while the other replica, the runner, runs
// the session's turn: the runner holds the session's lease because it is still running an earlier message of the
// same session, and a replica without the lease only stores a message (the lease holder runs it next). The runner
// announces each text delta through the store's change feed (a change_feed row, its id in a PostgreSQL NOTIFY);
// the door hears them and writes them to its client. Another database role forging or replaying notifications
// meanwhile adds nothing to the stream. The model streams the answer and holds after a few words, so what the client has before the
// hold opens is checked, then the whole message and `done`. Nothing sleeps: the test waits on the fake model, the
// change feed (its own LISTEN) and the stream itself.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { silentLogger } from "../../src/log.js";
import { clientConfig } from "../../src/store/postgres/connection.js";
import { ChangeListener } from "../../src/store/postgres/listener.js";
import {
  holdStream,
  lastUserText,
  startFakeAnthropic,
  text,
  type FakeAnthropic,
  type FakeError,
  type FakeReply,
  type MessagesRequest,
  type StreamHold,
} from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { writeDefinitions } from "../helpers/harness.js";
import { adminQuery, describeIfPostgres, freshDatabase, otherRole, type FreshDatabase } from "../helpers/postgres.js";
import { api, leaseHolder, startReplica, type Replica } from "./replica.js";

const ANSWER =
  "Lisbon is lovely in May: walk the Alfama early, ride tram 28 before the crowds, eat pastries in Belem, " +
  "and end the day on a miradouro when the light turns gold over the river.";
/** The deltas the model streams, as the fake Messages API cuts them: one word (with its trailing space) each. */
const PIECES = ANSWER.match(/\s*\S+\s*|\s+/g) ?? [];
/** The answer's stream holds after this many deltas, until the test opens it. */
const HELD_AFTER = 8;

let fake: FakeAnthropic;
let db: FreshDatabase;
let defs: ReturnType<typeof writeDefinitions>;
let listener: ChangeListener;
const replicas: Replica[] = [];
/** The change feed as this test hears it (LISTEN on the same channel as the replicas). */
const feed: Array<{ kind: string; sessionKey: string }> = [];
let heard: Array<() => void> = [];
/** A user message the model holds before answering: `reached` when its call arrives, answered once `open` resolves. */
const gates = new Map<string, { reached: () => void; open: Promise<void> }>();
/** A user message whose answer streams with this hold. */
const holds = new Map<string, StreamHold>();

async function model(req: MessagesRequest): Promise<FakeReply | FakeError> {
  // The newest message: the earlier one, never answered, may share the last user turn with it.
  const said = lastUserText(req).split("\n").at(-1)!;
  const gate = gates.get(said);
  if (gate) {
    gates.delete(said);
    gate.reached();
    await gate.open;
  }
  // The first test's earlier message ends its turn without writing a word (the model is overloaded): a request's
  // stream carries every delta of its session, so what an earlier turn writes shows up on it too (the last test).
  if (said === "question one") return { error: { status: 529, type: "overloaded_error", message: "Overloaded", noRetry: true } };
  if (said === "question three") return text("answer to question three");
  const hold = holds.get(said);
  return { ...text(ANSWER), ...(hold ? { stream: hold.stream } : {}) };
}

/** Resolves once the change feed has announced (after `from`) a change matching `match`. */
function announced(from: number, match: (change: { kind: string; sessionKey: string }) => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => {
      if (!feed.slice(from).some(match)) return;
      heard = heard.filter((h) => h !== check);
      resolve();
    };
    heard.push(check);
    check();
  });
}

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Reads a text/event-stream response as it arrives; `until` reads on until the events so far satisfy `enough`. */
function sse(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const events: SseEvent[] = [];
  return {
    events,
    async until(enough: (events: SseEvent[]) => boolean): Promise<void> {
      while (!enough(events)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`the stream ended first; it had: ${JSON.stringify(events)}`);
        buffer += decoder.decode(value, { stream: true });
        for (let end = buffer.indexOf("\n\n"); end >= 0; end = buffer.indexOf("\n\n")) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.*)$/m.exec(frame)?.[1];
          const data = /^data: (.*)$/m.exec(frame)?.[1];
          if (event) events.push({ event, data: data === undefined ? {} : (JSON.parse(data) as Record<string, unknown>) });
        }
      }
    },
  };
}

const deltas = (events: SseEvent[]) => events.filter((e) => e.event === "delta").map((e) => e.data);

describeIfPostgres("streamed deltas across replicas", () => {
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    fake.fallback(model);
    db = await freshDatabase();
    // The feed as a replica hears it: notifications name rows of change_feed, read by the application's role.
    listener = new ChangeListener(clientConfig(db.url), silentLogger());
    await listener.start();
    listener.watch((change) => {
      feed.push(change);
      for (const check of [...heard]) check();
    });
    defs = writeDefinitions({});
    replicas.push(...(await Promise.all(["a", "b"].map((name) => startReplica(name, { modelUrl: fake.url, db, defs })))));
  }, 60_000);

  afterAll(async () => {
    for (const r of replicas) r.proc.child.kill("SIGKILL");
    await Promise.all(replicas.map((r) => r.proc.exited));
    for (const hold of holds.values()) hold.release();
    await listener?.close();
    await fake?.close();
    await db?.drop();
  });

  it("a client on one replica gets the deltas of the turn another replica runs, in order and once each, then the message and done", async () => {
    const session = randomUUID();
    const key = `http:${session}`;
    // An earlier message of the session, held at the model: whichever replica won its lease runs the session now.
    const reached = deferred<void>();
    const open = deferred<void>();
    gates.set("question one", { reached: () => reached.resolve(), open: open.promise });
    const earlier = api(replicas[0]!, "/v1/messages", { session_id: session, items: [{ content_type: "text", content: "question one" }] });
    await reached.promise;
    const runner = await leaseHolder(db, replicas, key);
    expect(runner, "a replica holds the session's lease").toBeDefined();
    const door = replicas.find((r) => r !== runner)!;

    // The client streams its message from the other replica. The door answers with headers only once it has an
    // event to write, so the test does not wait for them: it waits for the message to be stored (announced).
    const hold = holdStream(HELD_AFTER);
    holds.set("question two", hold);
    const from = feed.length;
    const response = api(door, "/v1/messages", { session_id: session, items: [{ content_type: "text", content: "question two" }] }, { accept: "text/event-stream" });
    await announced(from, (c) => c.kind === "request" && c.sessionKey === key);
    open.resolve();
    expect((await earlier).status).toBe(200);

    // The runner goes on with the client's message (it still holds the lease) and the model holds mid-answer.
    await hold.paused;
    expect((await leaseHolder(db, replicas, key))?.name, "the turn runs on the other replica").toBe(runner!.name);
    const res = await response;
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const stream = sse(res);
    await stream.until((events) => deltas(events).length >= HELD_AFTER);
    // Before the hold opens: exactly the words written so far, in order, each once, and no message yet.
    expect(deltas(stream.events).map((d) => d.text)).toEqual(PIECES.slice(0, HELD_AFTER));
    expect(deltas(stream.events).every((d) => d.agent === "main" && d.depth === 1)).toBe(true);
    expect(stream.events.filter((e) => e.event === "message")).toEqual([]);

    // Someone else who can connect to the database forges a delta of this very request, and replays every
    // change written so far (ids are a sequence): the client must see none of it.
    const intruder = await otherRole(db);
    const forger = new pg.Client({ connectionString: intruder.url });
    await forger.connect();
    try {
      const requestId = (await adminQuery<{ id: string }>(db, "SELECT id FROM requests WHERE session_key = $1 AND text = 'question two'", [key])).rows[0]!.id;
      const forged = JSON.stringify({ kind: "delta", sessionKey: key, requestId, event: { agent: "main", depth: 1, text: "INJECTED " } });
      await forger.query("SELECT pg_notify('switchboard_changes', $1)", [forged]);
      await forger.query("SELECT pg_notify('switchboard_changes', n::text) FROM generate_series(1, 200) AS n");
    } finally {
      await forger.end();
      await intruder.drop();
    }

    hold.release();
    await stream.until((events) => events.some((e) => e.event === "done"));
    const written = deltas(stream.events).map((d) => d.text);
    expect(written, "the deltas in the order the model wrote them, each once").toEqual(PIECES.slice(0, written.length));
    // All of them, before the message: together they are the answer (as when one process runs the turn and streams
    // it, test/streaming), so a client never sees a piece of the preview arrive after the reply it belongs to.
    expect(written.join(""), "every delta reached the client before the message").toBe(ANSWER);
    // Then the whole message, once, and `done` last with the request's summary.
    const messages = stream.events.flatMap((e, i) => (e.event === "message" ? [{ at: i, data: e.data }] : []));
    expect(messages.map((m) => m.data)).toEqual([{ agent: "main", depth: 1, text: ANSWER, kind: "message" }]);
    expect(stream.events.findLastIndex((e) => e.event === "delta")).toBeLessThan(messages[0]!.at);
    const done = stream.events.at(-1)!;
    expect(done.event).toBe("done");
    expect(done.data).toMatchObject({ session_id: session, status: "completed", text: ANSWER });
    expect((done.data.messages as Array<{ text: string }>).map((m) => m.text)).toEqual([ANSWER]);
    expect(fake.rejected()).toEqual([]);
  });

  // A delta names its request, so the stream of a message queued behind an earlier one carries only its own words
  // (before, the earlier turn's words came first, glued to its own in the web chat's bubble).
  it("a message's stream carries only its own turn's deltas, not those of the earlier message it waited behind", async () => {
    const session = randomUUID();
    const key = `http:${session}`;
    const reached = deferred<void>();
    const open = deferred<void>();
    gates.set("question three", { reached: () => reached.resolve(), open: open.promise });
    const earlier = api(replicas[0]!, "/v1/messages", { session_id: session, items: [{ content_type: "text", content: "question three" }] });
    await reached.promise;
    const runner = await leaseHolder(db, replicas, key);
    const door = replicas.find((r) => r !== runner)!;
    const from = feed.length;
    const response = api(door, "/v1/messages", { session_id: session, items: [{ content_type: "text", content: "question four" }] }, { accept: "text/event-stream" });
    await announced(from, (c) => c.kind === "request" && c.sessionKey === key);
    // The earlier turn writes its answer now, while the client's stream is open.
    open.resolve();
    expect((await earlier).status).toBe(200);
    const stream = sse(await response);
    await stream.until((events) => events.some((e) => e.event === "done"));
    expect(
      deltas(stream.events)
        .map((d) => d.text)
        .join(""),
    ).toBe(ANSWER);
  });
});
