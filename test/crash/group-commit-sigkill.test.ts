// Group commit's guarantee under SIGKILL: inbound messages from several users committed in one group transaction,
// the process killed right after that commit and before any HTTP client got its answer (test/crash/kill-at-group-
// commit.ts, preloaded). The clients retry with their Idempotency-Key, as they must when a connection dies; after
// the restart every message is processed exactly once and every client gets its answer. The real `npm start`
// process, the real SDK against the strict fake Messages API, SQLite on disk.
import { spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, expect, it } from "vitest";
import { lastUserText, startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { freePort, processEnv, Proc } from "../integration/child-process.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const USERS = ["ana", "ben", "cy", "dee", "eve", "fay"];

let fake: FakeAnthropic;
let defs: ReturnType<typeof writeDefinitions>;
const procs: Proc[] = [];

beforeEach(async () => {
  fake = await startFakeAnthropic();
  fake.fallback((req) => text(`answer to ${lastUserText(req)}`));
  defs = writeDefinitions({});
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await fake.close();
  rmSync(defs.root, { recursive: true, force: true });
});

function gateway(port: number, extra: Record<string, string> = {}): Proc {
  const env = processEnv(fake.url, defs, { HTTP_PORT: String(port), HTTP_API_TOKENS: USERS.map((u) => `tok-${u}:${u}`).join(","), ...extra });
  const child = spawn(process.execPath, ["--import", "tsx", "--import", join(ROOT, "test/crash/kill-at-group-commit.ts"), join(ROOT, "src/main.ts")], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const proc = new Proc(child);
  procs.push(proc);
  return proc;
}

function post(port: number, user: string, key: string, message: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/v1/messages`, {
    method: "POST",
    headers: { authorization: `Bearer tok-${user}`, "content-type": "application/json", "idempotency-key": key },
    body: JSON.stringify({ items: [{ content_type: "text", content: message }] }),
  });
}

it("a SIGKILL between a group commit of several users' messages and their answers loses and doubles nothing", async () => {
  const port = await freePort();
  const first = gateway(port, { KILL_AT_INBOUND_GROUP: "2" });
  await first.logged("switchboard started");
  // Rounds of simultaneous messages until two of them land in one group (usually the first round).
  const sent: Array<{ user: string; key: string; message: string }> = [];
  for (let round = 0; round < 20 && first.child.exitCode === null && first.child.signalCode === null; round++) {
    const batch = USERS.map((user) => ({ user, key: `k-${round}-${user}`, message: `round ${round} from ${user}` }));
    sent.push(...batch);
    await Promise.allSettled(batch.map((m) => post(port, m.user, m.key, m.message)));
  }
  await first.exited;
  const killed = /KILLED after a group commit of (\d+) writes holding (\d+) inbound messages/.exec(first.stderr);
  expect(killed, first.stderr.slice(-2000)).not.toBeNull();
  expect(Number(killed![2])).toBeGreaterThanOrEqual(2);

  // The clients whose connection died retry with the same key; every retry gets the one answer.
  const second = gateway(port);
  await second.logged("switchboard started");
  const answers = await Promise.all(
    sent.map(async (m) => {
      const res = await post(port, m.user, m.key, m.message);
      expect(res.status, m.message).toBe(200);
      return ((await res.json()) as { text: string }).text;
    }),
  );
  expect(answers).toEqual(sent.map((m) => `answer to ${m.message}`));

  // Each message was stored once and reached the model once.
  const asked = fake.accepted().map(lastUserText);
  for (const m of sent) expect(asked.filter((t) => t === m.message), m.message).toHaveLength(1);
  second.child.kill("SIGTERM");
  await second.exited;
  const db = new Database(join(defs.root, "data", "switchboard.db"), { readonly: true });
  const stored = db.prepare("SELECT text, count(*) AS n FROM requests GROUP BY text").all() as Array<{ text: string; n: number }>;
  db.close();
  expect(stored.filter((r) => r.n !== 1)).toEqual([]);
  expect(stored.map((r) => r.text).sort()).toEqual(sent.map((m) => m.message).sort());
});
