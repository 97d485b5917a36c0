// A session's workspace follows the session to whichever replica holds its lease: replica A writes a file and is
// SIGKILLed; replica B, with a DATA_DIR of its own that never saw the file, continues the session and reads it and
// runs a command on it (materialised from PostgreSQL). Real `npm start` processes, the strict fake Messages API.
import { chmodSync, mkdirSync, readdirSync, rmSync, type Dirent } from "node:fs";
import { join, relative } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { describeIfPostgres, freshDatabase, type FreshDatabase } from "../helpers/postgres.js";
import { resultTexts } from "../helpers/requests.js";
import { probe } from "../helpers/sandbox.js";
import { api, say, startReplica, type Replica } from "./replica.js";

/** Every file under `dir`, relative, or none when it does not exist. */
function filesUnder(dir: string): string[] {
  try {
    return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[]).filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
  } catch {
    return [];
  }
}

let fake: FakeAnthropic;
let db: FreshDatabase;
let defs: ReturnType<typeof writeDefinitions>;
const replicas: Replica[] = [];

describeIfPostgres("a workspace across replicas", () => {
  beforeAll(async () => {
    fake = await startFakeAnthropic();
    db = await freshDatabase();
    defs = writeDefinitions({});
    // The sandbox's user (the gateway runs as root here) passes through the folders above each DATA_DIR/workspaces.
    chmodSync(defs.root, 0o711);
    for (const name of ["a", "b"]) mkdirSync(join(defs.root, `data-${name}`), { mode: 0o711 });
    replicas.push(...(await Promise.all(["a", "b"].map((name) => startReplica(name, { modelUrl: fake.url, db, defs })))));
  }, 60_000);

  afterAll(async () => {
    for (const r of replicas) r.proc.child.kill("SIGKILL");
    await Promise.all(replicas.map((r) => r.proc.exited));
    await fake?.close();
    await db?.drop();
    rmSync(defs.root, { recursive: true, force: true });
  });

  it("a second replica continues the session with its files after the first is SIGKILLed", async () => {
    fake.script(reply(toolUse("Write", { file_path: "plan/trip.md", content: "Lisbon in June\n" })), text("written"));
    // A received file is placed in the workspace too, and follows the session like the agent's own.
    const sent = await api(replicas[0]!, "/v1/messages", {
      items: [
        { content_type: "text", content: "note my plan" },
        { content_type: "text/csv", content: Buffer.from("day,city\n1,Lisbon\n").toString("base64"), filename: "days.csv" },
      ],
    });
    expect(sent.status).toBe(200);
    const first = (await sent.json()) as Record<string, unknown>;
    const session = String(first.session_id);
    // Whichever replica ran the turn dies; the other has never had the file. (The lease row is no witness of who ran
    // it: after the turn the other replica's look for orphaned work may take and release the lease, placing nothing.)
    const workspaceOf = (r: Replica) => filesUnder(join(defs.root, `data-${r.name}`, "workspaces"));
    const ran = replicas.filter((r) => workspaceOf(r).length > 0);
    expect(
      ran.map((r) => r.name),
      "exactly one replica has the workspace",
    ).toHaveLength(1);
    const a = ran[0]!;
    const b = replicas.find((r) => r !== a)!;
    expect(workspaceOf(b)).toEqual([]);
    expect(workspaceOf(a).sort()).toEqual([expect.stringMatching(/^[0-9a-f]{32}\/days\.csv$/), expect.stringMatching(/^[0-9a-f]{32}\/plan\/trip\.md$/)]);
    a.proc.child.kill("SIGKILL");
    await a.proc.exited;

    let results: Array<{ content: string; error: boolean }> = [];
    const calls = [
      toolUse("Read", { file_path: "plan/trip.md" }),
      toolUse("Read", { file_path: "days.csv" }),
      ...(probe.ok ? [toolUse("Bash", { command: "cat plan/trip.md | tr a-z A-Z" })] : []),
    ];
    fake.script(reply(...calls), (req) => {
      results = resultTexts(req);
      return text("read");
    });
    await say(b, session, "what was my plan?");
    expect(results).toEqual([
      { content: "     1\tLisbon in June", error: false },
      { content: "     1\tday,city\n     2\t1,Lisbon", error: false },
      ...(probe.ok ? [{ content: "LISBON IN JUNE", error: false }] : []),
    ]);
  });
});
