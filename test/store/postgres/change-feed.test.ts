// The PostgreSQL change feed beyond the contract: payloads over NOTIFY's size limit, connections that drop.
import { afterEach, beforeEach, expect, it } from "vitest";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { adminQuery, describeIfPostgres, freshDatabase, serverAdminQuery, type FreshDatabase } from "../../helpers/postgres.js";
import { ChangeRecorder, isRequest } from "../contract/changes-recorder.js";
import { newRequest, outbound } from "../contract/fixtures.js";
import { captureLog, type CapturedLog } from "./log-capture.js";

const K = "telegram:100";

describeIfPostgres("PostgreSQL store: change feed", () => {
  let database: FreshDatabase;
  let logs: CapturedLog;
  let store: PostgresStore;
  let changes: ChangeRecorder;

  beforeEach(async () => {
    database = await freshDatabase();
    logs = captureLog();
    store = await PostgresStore.open(database.url, { log: logs.log });
    changes = new ChangeRecorder(store);
  });
  afterEach(async () => {
    changes.close();
    await store.close();
    await database.drop();
  });

  /** Ends the store's connections of one kind from the server side, as a restart or an admin would. */
  const terminate = (applicationName: string) =>
    serverAdminQuery(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2`, [
      database.name,
      applicationName,
    ]);

  it("a step queuing more replies than one notification can carry commits, and every request id is announced", async () => {
    const requestIds = Array.from({ length: 400 }, (_, i) => `request-${String(i).padStart(4, "0")}-${"x".repeat(60)}`);
    await store.commit({ sessionKey: K, outbound: requestIds.map((requestId, i) => outbound(`o${i}`, { requestId })) });
    expect(await store.pendingOutbound(K)).toHaveLength(400);
    const announced = new Set<string | null>();
    while (announced.size < requestIds.length) {
      const change = await changes.waitFor((c) => c.kind === "outbound" && c.requestIds.some((id) => !announced.has(id)));
      if (change.kind === "outbound") change.requestIds.forEach((id) => announced.add(id));
    }
    expect([...announced].sort()).toEqual(requestIds);
  });

  it("an announced change too long for a notification arrives shortened instead of failing", async () => {
    const agent = `agent:${"a".repeat(20_000)}`;
    await store.announce({ kind: "stack", sessionKey: K, event: { type: "push", agent, depth: 1 } });
    const change = await changes.waitFor((c) => c.kind === "stack");
    expect(change).toMatchObject({ kind: "stack", sessionKey: K, event: { type: "push", depth: 1 } });
    expect(change.kind === "stack" && agent.startsWith(change.event.agent) && change.event.agent.length > 100).toBe(true);
  });

  it("anything else on the channel (not JSON, the wrong shape, an unknown kind, a delta without text) is ignored; real changes still arrive", async () => {
    // Whoever can reach the database can NOTIFY this channel: nothing they send may reach a watcher or crash the store.
    for (const payload of ["not json", "null", "[]", '{"kind":"request"}', '{"kind":"drop-tables","sessionKey":"x"}', '{"kind":"delta","sessionKey":"x","event":{"agent":"a","depth":1}}', '{"kind":"outbound","sessionKey":"x","requestIds":"r1"}']) {
      await adminQuery(database, "SELECT pg_notify('switchboard_changes', $1)", [payload]);
    }
    await store.announce({ kind: "delta", sessionKey: K, event: { agent: "main", depth: 1, text: "after the noise" } });
    const change = await changes.waitFor((c) => c.kind === "delta");
    expect(change).toEqual({ kind: "delta", sessionKey: K, event: { agent: "main", depth: 1, text: "after the noise" } });
    expect(changes.seen).toEqual([change]);
  });

  it("when the listening connection is killed, it reconnects and changes flow again", async () => {
    await terminate("switchboard-listener");
    await logs.waitFor("lost the PostgreSQL change feed connection");
    await logs.waitFor("listening to the PostgreSQL change feed again");
    await store.insertRequest(newRequest("r1", K));
    expect(await changes.waitFor(isRequest(K, "r1"))).toEqual({ kind: "request", sessionKey: K, requestId: "r1" });
  });

  it("pooled connections killed while idle are replaced; queries carry on", async () => {
    await store.ping();
    await terminate("switchboard");
    await logs.waitFor("a pooled PostgreSQL connection failed");
    await expect(store.ping()).resolves.toBeUndefined();
    await store.insertRequest(newRequest("r1", K));
    expect((await store.request("r1"))?.status).toBe("pending");
  });

  it("ping rejects while the database refuses connections, and resolves once it accepts them again", async () => {
    await serverAdminQuery(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS false`);
    await terminate("switchboard");
    await logs.waitFor("a pooled PostgreSQL connection failed");
    await expect(store.ping()).rejects.toThrow(/not currently accepting connections/);
    await serverAdminQuery(`ALTER DATABASE ${database.name} ALLOW_CONNECTIONS true`);
    await expect(store.ping()).resolves.toBeUndefined();
  });
});
