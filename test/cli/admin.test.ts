// `npm run admin -- sessions|show|approvals|stuck`, run as the operator runs it (a child process on a DATA_DIR):
// a conversation waiting for approval right now (the real runtime), and one whose approval has waited for two
// hours (written through the store with its clock set back).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionDetail, SessionRow, StuckView } from "../../src/admin/report.js";
import { reply, toolUse } from "../fakes/anthropic/server.js";
import { startHarness } from "../helpers/harness.js";
import { bankTools } from "../helpers/tools.js";
import { seedWaitingApproval } from "../admin/seed.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { nodeArgs } from "../integration/child-process.js";

const ROOT = new URL("../../", import.meta.url).pathname;
const OLD = "telegram:-100123:topic:7";
const IDLE = "telegram:-100456";
const HOUR = 3_600_000;

let root: string;
let dataDir: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "switchboard-admin-"));
  dataDir = join(root, "data");
  const dbFile = join(dataDir, "switchboard.db");
  await seedWaitingApproval(dbFile, { sessionKey: OLD, at: Date.now() - 2 * HOUR, id: "old", skill: true });
  // A session nobody has written in yet: its key starts like OLD's, so "telegram:-100" names neither.
  const bare = new SqliteStore(dbFile, () => Date.now() - 3 * HOUR);
  await bare.sessions.open(IDLE, () => "as_idle");
  await bare.schedules.create(
    {
      id: "sch_digest",
      ownerId: "telegram:1001",
      sessionKey: OLD,
      instruction: "Daily digest",
      schedule: { kind: "cron", cron: "0 9 * * *" },
      timezone: "Europe/Berlin",
      nextDue: Date.parse("2030-01-01T08:00:00Z"),
      createdByTask: "task_1",
    },
    20,
  );
  await bare.close();
  const h = await startHarness({ tools: bankTools().list, dbFile });
  try {
    h.fake.script(reply(toolUse("transfer", { amount: 50 })));
    await h.send("send Bob 50");
  } finally {
    await h.close();
  }
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs the CLI to its end (stdout and stderr fully read). */
function admin(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs("src/cli/admin.ts"), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", DATA_DIR: dataDir, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const fits = (text: string) => text.split("\n").every((line) => [...line].length <= 100);

describe("npm run admin", () => {
  it("sessions: the most recently active first, with owner, status, stack and cost; --json for scripts", async () => {
    const [plain, json, one] = await Promise.all([admin(["sessions"]), admin(["sessions", "--json"]), admin(["sessions", "--limit", "1", "--json"])]);
    expect([plain.code, plain.stderr]).toEqual([0, ""]);
    const lines = plain.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SESSION +OWNER +STATUS +STACK +COST +ACTIVE$/);
    expect(lines[1]).toMatch(/^console:t +alice +needs approval +Switchboard +\$\S+ +(just now|\d+[sm] ago)$/);
    expect(lines[2]).toMatch(/^telegram:-100123:topic:7 +telegram:1001 +needs approval +… › Interview … +\$0 +2h ago$/);
    expect(lines[3]).toMatch(/^telegram:-100456 +- +idle +- +\$0 +3h ago$/);
    expect(lines).toHaveLength(4);
    expect(fits(plain.stdout)).toBe(true);
    expect(json.code).toBe(0);
    const sessions = (JSON.parse(json.stdout) as { sessions: SessionRow[] }).sessions;
    expect(sessions.map((s) => [s.key, s.provider, s.owner, s.stack, s.status, s.pendingApprovals])).toEqual([
      ["console:t", "console", "alice", ["main"], "waiting_approval", 1],
      [OLD, "telegram", "telegram:1001", ["main", "skill:interview"], "waiting_approval", 1],
      [IDLE, "telegram", null, [], "idle", 0],
    ]);
    expect((JSON.parse(one.stdout) as { sessions: SessionRow[] }).sessions.map((s) => s.key)).toEqual(["console:t"]);
  });

  it("show: the stack, the task, its approvals and errors; an unknown key exits 1", async () => {
    const [plain, json, unknown] = await Promise.all([admin(["show", OLD]), admin(["show", OLD, "--json"]), admin(["show", "telegram:404"])]);
    expect([plain.code, plain.stderr]).toEqual([0, ""]);
    expect(plain.stdout).toMatch(/^Session  telegram:-100123:topic:7 \(telegram\)\nOwner    telegram:1001\nStatus   needs approval, last active 2h ago\n/);
    expect(plain.stdout).toMatch(/\n +1 +Switchboard +main +claude-test +2\/25\n +2 +Interview skill +skill +claude-test +2\/25\n/);
    expect(plain.stdout).toContain("  Id      task_old\n");
    expect(plain.stdout).toMatch(
      /Pending approvals \(1\)\n {2}ID +AGE +TOOL +AGENT +REQUEST +INPUT\n {2}ap_old +2h +transfer +Interview skill +req_old +\{"amount":900\}\n/,
    );
    expect(plain.stdout).toContain("Last errors (0)\n  none\n");
    expect(fits(plain.stdout)).toBe(true);
    const detail = JSON.parse(json.stdout) as SessionDetail;
    expect(detail.frames.map((f) => [f.agent, f.depth])).toEqual([
      ["main", 1],
      ["skill:interview", 2],
    ]);
    expect(detail.task).toMatchObject({ id: "task_old", status: "waiting_approval", owner: "telegram:1001" });
    expect(detail.approvals.map((a) => [a.id, a.requestId])).toEqual([["ap_old", "req_old"]]);
    expect(unknown).toEqual({ code: 1, stdout: "", stderr: 'no session "telegram:404" and none whose key starts with it (npm run admin -- sessions lists them)\n' });
  });

  it("show: a unique start of a key is enough; one that starts several keys lists them and exits 1", async () => {
    const [prefix, ambiguous] = await Promise.all([admin(["show", "telegram:-1001"]), admin(["show", "telegram:-100"])]);
    expect([prefix.code, prefix.stderr]).toEqual([0, ""]);
    expect(prefix.stdout).toMatch(/^Session  telegram:-100123:topic:7 \(telegram\)\nOwner    telegram:1001\n/);
    expect(ambiguous).toEqual({
      code: 1,
      stdout: "",
      stderr: '"telegram:-100" is the start of 2 session keys (telegram:-100123:topic:7, telegram:-100456); type more of the key\n',
    });
  });

  it("approvals: every pending one, oldest first", async () => {
    const { code, stdout } = await admin(["approvals"]);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^ID +AGE +TOOL +AGENT +SESSION +INPUT$/);
    expect(lines[1]).toMatch(/^ap_old +2h +transfer +Interview skill +telegram:-100123:topi… +\{"amount":900\}$/);
    expect(lines[2]).toMatch(/^ap_\S+ +\d+[sm] +transfer +Switchboard +console:t +\{"amount":50\}$/);
    expect(lines[3]).toBe("(keys cut short with …: --json shows them whole)");
    expect(lines).toHaveLength(4);
  });

  it("stuck: what has waited longer than --after, ADMIN_STUCK_AFTER or 5 minutes", async () => {
    const [byDefault, hour, none, configured, json] = await Promise.all([
      admin(["stuck"]),
      admin(["stuck", "--after", "1h"]),
      admin(["stuck", "--after", "3h"]),
      admin(["stuck"], { ADMIN_STUCK_AFTER: "3h" }),
      admin(["stuck", "--after", "10m", "--json"]),
    ]);
    expect(byDefault.code).toBe(0);
    expect(byDefault.stdout).toMatch(/^Stuck for over 5m:\n\nApprovals waiting \(1\)\nID .*\nap_old +2h +transfer /);
    expect(byDefault.stdout).toMatch(
      /Replies not delivered \(1\)\nAGE +FROM +SESSION +REPLY\n2h +Interview skill +telegram:-100123:topic:7 +out_old\n\(keys cut short with …: --json shows them whole\)\n$/,
    );
    expect(byDefault.stdout).not.toContain("console:t");
    expect(hour.stdout).toMatch(/^Stuck for over 1h:\n/);
    expect(hour.stdout).toContain("ap_old");
    expect(none).toEqual({ code: 0, stdout: "nothing stuck for over 3h\n", stderr: "" });
    expect(configured.stdout).toBe("nothing stuck for over 3h\n");
    const stuck = JSON.parse(json.stdout) as StuckView;
    expect(stuck.olderThanMs).toBe(600_000);
    expect(stuck.approvals.map((a) => [a.id, a.sessionKey])).toEqual([["ap_old", OLD]]);
    expect(stuck.outbound.map((o) => o.id)).toEqual(["out_old"]);
    expect(stuck.requests).toEqual([]);
  });

  it("schedules: every job with owner, chat, schedule, next run and last result; --json for scripts", async () => {
    const [plain, json] = await Promise.all([admin(["schedules"]), admin(["schedules", "--json", "--limit", "5"])]);
    expect([plain.code, plain.stderr]).toEqual([0, ""]);
    const lines = plain.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe("Scheduled jobs (1)");
    expect(lines[2]).toMatch(/^sch_digest +telegram:1001 +telegram:-100123:topic:7 +cron 0 9 \* \* \* Europe\/Berlin +active +2030-01-01 08:00 \(in \S+\) +—$/);
    expect(JSON.parse(json.stdout)).toEqual({
      schedules: [
        {
          id: "sch_digest",
          ownerId: "telegram:1001",
          sessionKey: OLD,
          schedule: "cron 0 9 * * *",
          timezone: "Europe/Berlin",
          status: "active",
          nextRun: "2030-01-01T08:00:00.000Z",
          lastRun: null,
          lastResult: null,
          createdByTask: "task_1",
        },
      ],
    });
  });

  it("usage errors exit 2 with the usage; a missing database exits 1 and says where it looked", async () => {
    const cases = [
      [[], /^usage: npm run admin -- sessions/],
      [["frobnicate"], /^unknown command "frobnicate"\nusage:/],
      [["sessions", "--bogus"], /^unknown option "--bogus"\nusage:/],
      [["sesions"], /^unknown command "sesions" \(did you mean sessions\?\)\nusage:/],
      [["show"], /^show needs a session key/],
      [["sessions", "extra"], /^unexpected argument "extra"/],
      [["sessions", "--limit", "0"], /^--limit must be a whole number from 1 to 1000, got "0"/],
      [["stuck", "--after", "soon"], /^--after must be a duration such as 90s, 10m or 2h, got "soon"/],
      [["approvals", "--limit", "3"], /^--limit is for sessions and schedules/],
    ] as const;
    const results = await Promise.all(cases.map(([args]) => admin([...args])));
    results.forEach((r, i) => {
      expect([cases[i]![0], r.code, r.stdout]).toEqual([cases[i]![0], 2, ""]);
      expect(r.stderr).toMatch(cases[i]![1]);
      expect(r.stderr).toContain("npm run admin -- stuck [--after 10m] [--json]");
    });
    const missing = await admin(["sessions"], { DATA_DIR: join(root, "nowhere") });
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^no database at .*nowhere\/switchboard\.db; set DATA_DIR \(or DATABASE_URL\)/);
  });
});
