// A replica for the multi-replica tests: a real `npm start` process (node --import tsx src/main.ts) on a shared
// PostgreSQL database, with its HTTP API on a port of its own, and the calls a client makes to it.
import { join } from "node:path";
import { expect } from "vitest";
import { adminQuery, type FreshDatabase } from "../helpers/postgres.js";
import { freePort, run, type Proc } from "../integration/child-process.js";

export const TOKEN = "tok-alice-0123456789";
export const BOB = "tok-bob-0123456789";

export interface Replica {
  name: string;
  proc: Proc;
  base: string;
}

export interface ReplicaSetting {
  /** The fake Messages API. */
  modelUrl: string;
  db: FreshDatabase;
  /** A directory for the replicas' own DATA_DIRs, and the skills and agents they load. */
  defs: { root: string; skills: string; agents: string };
}

/** Starts a replica and resolves once it is serving (or fails with its log if it exits first). */
export async function startReplica(name: string, setting: ReplicaSetting): Promise<Replica> {
  const port = await freePort();
  const proc = run("src/main.ts", [], {
    ANTHROPIC_API_KEY: "k",
    ANTHROPIC_BASE_URL: setting.modelUrl,
    ANTHROPIC_MAX_RETRIES: "0",
    DATABASE_URL: setting.db.url,
    SESSION_LEASE_MS: "1000",
    DATA_DIR: join(setting.defs.root, `data-${name}`),
    SKILLS_DIR: setting.defs.skills,
    AGENTS_DIR: setting.defs.agents,
    HTTP_PORT: String(port),
    HTTP_API_TOKENS: `${TOKEN}:alice,${BOB}:bob`,
    HTTP_REQUEST_ALLOW: "127.0.0.1",
    LOG_LEVEL: "info",
  });
  proc.child.stdout.on("data", () => {});
  await Promise.race([
    proc.logged('"msg":"switchboard started"'),
    proc.exited.then((code) => {
      throw new Error(`replica ${name} exited (${code}) while starting:\n${proc.stderr}`);
    }),
  ]);
  return { name, proc, base: `http://127.0.0.1:${port}` };
}

export function api(replica: Replica, path: string, body?: unknown, headers: Record<string, string> = {}, token = TOKEN): Promise<Response> {
  return fetch(replica.base + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** POST /v1/messages, answered synchronously; fails the test unless it is a 200. */
export async function say(replica: Replica, session: string | undefined, words: string): Promise<Record<string, unknown>> {
  const res = await api(replica, "/v1/messages", { ...(session ? { session_id: session } : {}), items: [{ content_type: "text", content: words }] });
  const body = (await res.json()) as Record<string, unknown>;
  expect(res.status, `${replica.name}: ${JSON.stringify(body)}`).toBe(200);
  return body;
}

/** The replica (by the pid in its lease holder name) that holds a session's lease now. */
export async function leaseHolder(db: FreshDatabase, replicas: Replica[], sessionKey: string): Promise<Replica | undefined> {
  const rows = await adminQuery<{ holder: string }>(db, "SELECT holder FROM leases WHERE key = $1", [sessionKey]);
  const pid = Number(/-(\d+)-[0-9a-f]+$/.exec(rows.rows[0]?.holder ?? "")?.[1]);
  return replicas.find((r) => r.proc.child.pid === pid);
}
