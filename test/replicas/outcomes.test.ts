// A request one replica failed, as a waiter on another replica hears of it: the code stored with the request
// (quota, cancelled, the model's failure, …), never "finished" because the words were not the gateway's fixed ones.
// Two replicas on one PostgreSQL database: A is a whole gateway and runs every turn; B is only what answers
// Gateway.whenDone there (its RequestBook, told of ends by its own change feed as the gateway wires it), so no turn
// can ever run on B and its answers always come from the store.
import { afterEach, beforeEach, expect, it } from "vitest";
import { RequestBook } from "../../src/gateway/request-book.js";
import { FAILURE_CODES } from "../../src/store/store.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { counterIds, skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { describeIfPostgres, freshDatabase, type FreshDatabase } from "../helpers/postgres.js";
import { commitStep } from "../helpers/steps.js";
import { newRequest } from "../store/contract/fixtures.js";

const NOON = Date.UTC(2026, 10, 27, 12);

describeIfPostgres("a request another replica failed", () => {
  let database: FreshDatabase;
  let fake: FakeAnthropic;
  const started: Harness[] = [];
  const opened: PostgresStore[] = [];

  beforeEach(async () => {
    database = await freshDatabase();
    fake = await startFakeAnthropic();
  });
  afterEach(async () => {
    for (const h of started.splice(0)) await h.close(true);
    await Promise.all(opened.splice(0).map((s) => s.close()));
    await fake.close();
    await database.drop();
  });

  /** Replica A: a gateway of its own on its own connection pool to the shared database. */
  async function replicaA(options: Parameters<typeof startHarness>[0] = {}): Promise<Harness> {
    const h = await startHarness({ ...options, fake, ids: counterIds("a"), store: await PostgresStore.open(database.url, { poolMax: 4 }) });
    started.push(h);
    return h;
  }

  /** Replica B's waiting side: whenDone, settled when its change feed hears a request ended (Gateway.heard). */
  async function replicaB(): Promise<{ whenDone: RequestBook["whenDone"] }> {
    const store = await PostgresStore.open(database.url, { poolMax: 2 });
    opened.push(store);
    const book = new RequestBook(store, 60_000);
    store.feed.watch((change) => {
      if (change.kind === "done" && book.awaitedFromElsewhere(change.requestId)) void book.settleIfDone(change.requestId);
    });
    return { whenDone: (id) => book.whenDone(id) };
  }

  async function submitted(h: Harness, sessionKey: string, messageId: string, userId: string, said: string): Promise<string> {
    const result = await h.gateway.submit({ sessionKey, messageId, userId, text: said });
    if (result.status !== "accepted") throw new Error(`not accepted: ${result.status}`);
    return result.requestId;
  }

  it("is failed with `quota` on B when A's daily quota refused it", async () => {
    const a = await replicaA({ quotas: { settings: { userDailyMessages: 1 }, now: () => NOON, zoneOf: async () => null } });
    const b = await replicaB();
    fake.script(text("One."));
    expect(await b.whenDone(await submitted(a, "http:s1", "1", "http:alice", "first"))).toEqual({ status: "finished" });
    const refused = await submitted(a, "http:s1", "2", "http:alice", "second");
    expect(await b.whenDone(refused)).toEqual({ status: "failed", code: "quota" });
    expect(await a.gateway.whenDone(refused)).toEqual({ status: "failed", code: "quota" });
  });

  it("is failed with `cancelled` on B for the turn a /cancel cut off on A", async () => {
    const a = await replicaA({ files: skillFile("interview", "Ask.") });
    const b = await replicaB();
    const called = deferred<void>();
    fake.script(reply(toolUse("use_skill", { name: "interview", message: "x" })), () => {
      called.resolve();
      return { hang: true };
    });
    const turn = await submitted(a, "telegram:-5", "1", "telegram:1", "go");
    // B waits before the turn ends: it hears of the end through its change feed, then reads the request.
    const onB = b.whenDone(turn);
    await called.promise;
    await submitted(a, "telegram:-5", "2", "telegram:1", "/cancel");
    expect(await onB).toEqual({ status: "failed", code: "cancelled" });
  });

  it("is failed with `engine` on B when the model's error ended A's task", async () => {
    const a = await replicaA();
    const b = await replicaB();
    fake.script({ error: { status: 529, type: "overloaded_error", message: "Overloaded" } });
    const id = await submitted(a, "console:m", "1", "alice", "hi");
    expect(await b.whenDone(id)).toEqual({ status: "failed", code: "engine" });
    expect((await a.store.requests.get(id))?.error).toMatch(/Overloaded/);
  });

  it("reads every code back as written on the other replica, busy among them", async () => {
    const a = await PostgresStore.open(database.url, { poolMax: 2 });
    opened.push(a);
    const b = await replicaB();
    for (const code of FAILURE_CODES) {
      const key = `telegram:${code}`;
      await a.requests.insert(newRequest(`r-${code}`, key));
      const waiting = b.whenDone(`r-${code}`);
      await commitStep(a, { sessionKey: key, request: { id: `r-${code}`, status: "failed", error: `words for ${code}`, errorCode: code } });
      expect(await waiting).toEqual({ status: "failed", code });
    }
  });
});
