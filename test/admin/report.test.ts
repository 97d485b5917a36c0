// The operator's views over a real store: a scripted conversation waiting on an approval, another whose model
// call failed under a hostile session key, and the terminal renderers that must keep such strings harmless.
import { afterEach, describe, expect, it } from "vitest";
import { approvalsView, formatApprovals, formatSession, formatSessions, formatStuck, sessionsView, sessionView, snapshot, stuckView } from "../../src/admin/report.js";
import { ago, clean, duration, parseDuration, table, tokens, usd } from "../../src/admin/text.js";
import { reply, toolUse } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { bankTools } from "../helpers/tools.js";

// Clears the screen, sets the window title, switches to red (7-bit and 8-bit CSI), a bidi override and a NUL.
const HOSTILE = "\x1b[2J\x1b]0;pwned\x07\u009b31mevil\u202e\x00\r\nkey";
const HOSTILE_KEY = `console:${HOSTILE}`;
const MINUTE = 60_000;

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

/** alice's transfer waits for approval in console:t; a failed model call in the hostile session. */
async function world() {
  h = await startHarness({ tools: bankTools().list, files: skillFile("interview", "Ask.") });
  h.fake.script(reply(toolUse("transfer", { amount: 50, note: `${HOSTILE} <img src=x onerror=alert(1)>` })));
  const shown = await h.send("send Bob 50");
  const prompt = shown.find((m) => m.approvalId)!;
  const approvalId = prompt.approvalId!;
  h.fake.script({ error: { status: 400, type: "invalid_request_error", message: `bad ${HOSTILE}`, noRetry: true } });
  await h.send("hello", { session: HOSTILE, user: "bob" });
  return { approvalId, requestId: prompt.requestId! };
}

/** No control character, escape or bidi override survives, and no line is wider than 100 characters. */
function expectTerminalSafe(text: string) {
  expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]/);
  for (const line of text.split("\n")) expect([...line].length, line).toBeLessThanOrEqual(100);
}

describe("admin views", () => {
  it("lists recent sessions with their stack, status, owner, tokens and pending approvals", async () => {
    await world();
    const { sessions } = await sessionsView(h.store, { limit: 10 });
    expect(sessions.map((s) => s.key).sort()).toEqual([HOSTILE_KEY, "console:t"].sort());
    const waiting = sessions.find((s) => s.key === "console:t")!;
    expect(waiting).toMatchObject({ provider: "console", owner: "alice", stack: ["main"], status: "waiting_approval", pendingApprovals: 1 });
    expect(waiting.tokens).toBeGreaterThan(0);
    expect(waiting.costUsd).toBeGreaterThanOrEqual(0);
    expect(sessions.find((s) => s.key === HOSTILE_KEY)).toMatchObject({ status: "idle", stack: [], pendingApprovals: 0 });
    expect((await sessionsView(h.store, { limit: 1 })).sessions).toHaveLength(1);
  });

  it("shows one session: its frames, active task with cost, pending approvals and last errors; null when unknown", async () => {
    const { approvalId, requestId } = await world();
    const now = Date.now();
    const view = (await sessionView(h.store, "console:t", { now }))!;
    expect(view.frames).toEqual([{ agent: "main", type: "main", model: "claude-test", iteration: expect.any(Number), maxIterations: 25, depth: 1 }]);
    expect(view.task).toMatchObject({ status: "waiting_approval", owner: "alice", costUsd: expect.any(Number) });
    expect(view.task!.tokens).toBe(view.session.tokens);
    expect(view.approvals).toEqual([
      expect.objectContaining({
        id: approvalId,
        sessionKey: "console:t",
        tool: "transfer",
        agent: "main",
        owner: "alice",
        input: expect.stringContaining('"amount":50'),
      }),
    ]);
    // The approval names the request whose turn it paused, and the task it belongs to.
    expect(view.approvals[0]).toMatchObject({ requestId, taskId: view.task!.id });
    const text = formatSession(view, now);
    expect(text).toMatch(/\n  ID +AGE +TOOL +AGENT +REQUEST +INPUT\n/);
    expect(text).toMatch(new RegExp(`\\n  ${approvalId} +\\d+s +transfer +Switchboard +${requestId} +\\{"amount":50`));
    expect(view.approvals[0]!.input.length).toBeLessThanOrEqual(200);
    expect(view.errors).toEqual([]);

    const failed = (await sessionView(h.store, HOSTILE_KEY))!;
    expect(failed.task).toBeNull();
    expect(failed.errors.map((e) => e.source).sort()).toEqual(["request", "task"]);
    expect(failed.errors[0]!.error).toContain("bad \x1b[2J");
    expect(await sessionView(h.store, "console:nobody")).toBeNull();
  });

  it("lists pending approvals oldest first with their age, and calls one stuck only past the threshold", async () => {
    const { approvalId } = await world();
    const requestedAt = (await h.store.approvals.get(approvalId))!.requestedAt;
    const { approvals } = await approvalsView(h.store, { now: requestedAt + 3 * MINUTE });
    expect(approvals).toEqual([expect.objectContaining({ id: approvalId, sessionKey: "console:t", ageMs: 3 * MINUTE })]);

    const fresh = await stuckView(h.store, { olderThanMs: 5 * MINUTE, now: requestedAt + 3 * MINUTE });
    expect(fresh).toEqual({ olderThanMs: 5 * MINUTE, requests: [], outbound: [], approvals: [] });
    expect(formatStuck(fresh)).toBe("nothing stuck for over 5m");

    const later = requestedAt + 6 * MINUTE;
    const stuck = await stuckView(h.store, { olderThanMs: 5 * MINUTE, now: later });
    expect(stuck.approvals).toEqual([expect.objectContaining({ id: approvalId, tool: "transfer", ageMs: 6 * MINUTE })]);
    const text = formatStuck(stuck, later);
    expectTerminalSafe(text);
    expect(text).toMatch(/^Stuck for over 5m:\n\nApprovals waiting \(1\)\nID +AGE +TOOL +AGENT +SESSION +INPUT\n/);
    expect(text).toContain(`${approvalId.padEnd(13)}  6m       transfer      Switchboard         console:t`);

    const snap = await snapshot(h.store, { limit: 10, stuckAfterMs: 5 * MINUTE, now: later });
    expect(snap.counts).toMatchObject({ activeStacks: 1, pendingApprovals: 1 });
    expect(snap.stuck.approvals).toHaveLength(1);
    expect(snap.sessions).toHaveLength(2);
  });

  it("renders aligned columns within 100 characters and strips control characters and escapes from keys, inputs and errors", async () => {
    await world();
    const now = Date.now() + 2 * 3600_000 + 5 * MINUTE;
    const sessions = formatSessions(await sessionsView(h.store, { limit: 10 }), now);
    expectTerminalSafe(sessions);
    const lines = sessions.split("\n");
    expect(lines[0]).toMatch(/^SESSION +OWNER +STATUS +STACK +COST +ACTIVE$/);
    expect(lines.find((l) => l.startsWith("console:t "))).toMatch(/^console:t +alice +needs approval +Switchboard +\$0(\.\d{4})? +2h 5m ago$/);
    expect(lines.find((l) => l.startsWith("console:evil"))).toMatch(/^console:evil key +\S+ +idle +- /);
    // Columns line up: every row's status starts where the header's does.
    const at = lines[0]!.indexOf("STATUS");
    for (const line of lines.slice(1)) expect(line.slice(at - 2, at)).toBe("  ");

    const approvals = formatApprovals(await approvalsView(h.store, { now }), now);
    expectTerminalSafe(approvals);
    expect(approvals).toContain("transfer");

    const detail = formatSession((await sessionView(h.store, "console:t", { now }))!, now);
    expectTerminalSafe(detail);
    expect(detail).toMatch(/^Session  console:t \(console\)\nOwner    alice\nStatus   needs approval, last active 2h 5m ago\n/);
    expect(detail).toContain("      1  Switchboard               main   claude-test");
    const hostile = formatSession((await sessionView(h.store, HOSTILE_KEY, { now }))!, now);
    expectTerminalSafe(hostile);
    expect(hostile).toContain("Session  console:evil key (console)");
    expect(hostile).toMatch(/request +Anthropic API error 400: bad evil key/);
  });
});

describe("admin text", () => {
  it("cleans escape sequences whole, control characters and bidi overrides, keeping the words", () => {
    expect(clean(HOSTILE)).toBe("evil key");
    expect(clean("a\x1bcb\x1b[1;31mc\x1bP1$r\x1b\\d\u009d8;;x\u009ce\tf\nok ✓ 日本")).toBe("abcde f ok ✓ 日本");
    expect(clean("plain: telegram:-100123:topic:7")).toBe("plain: telegram:-100123:topic:7");
  });

  it("says durations, ages, money and tokens the way an operator reads them", () => {
    expect([
      duration(0),
      duration(42_000),
      duration(3 * MINUTE),
      duration(125 * MINUTE),
      duration(120 * MINUTE),
      duration(26 * 60 * MINUTE),
      duration(13 * 60 * MINUTE + 5 * MINUTE),
      duration(12 * 24 * 60 * MINUTE + 60 * MINUTE),
    ]).toEqual(["0s", "42s", "3m", "2h 5m", "2h", "1d 2h", "13h", "12d"]);
    expect([ago(1000, 1500), ago(0, 3 * MINUTE), ago(2 * MINUTE, 0)]).toEqual(["just now", "3m ago", "in 2m"]);
    expect([usd(0), usd(0.0042), usd(0.5), usd(1), usd(12.345)]).toEqual(["$0", "$0.0042", "$0.5000", "$1.00", "$12.35"]);
    expect([tokens(950), tokens(12_345), tokens(1000), tokens(4_500_000), tokens(250_000)]).toEqual(["950", "12.3k", "1k", "4.5M", "250k"]);
    expect([parseDuration("10m"), parseDuration("1s"), parseDuration("1.5h"), parseDuration("1500"), parseDuration("soon")]).toEqual([
      600_000,
      1000,
      5_400_000,
      1500,
      null,
    ]);
  });

  it("clips every cell to its column", () => {
    const text = table(
      [
        { title: "A", width: 4 },
        { title: "B", width: 3, align: "right" },
      ],
      [
        ["abcdefgh", "1"],
        ["\x1b[2Jx", "12345"],
      ],
    );
    expect(text.split("\n")).toEqual(["A       B", "abc…    1", "x     12…"]);
  });
});
