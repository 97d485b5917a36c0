// Bash through the real runtime, in a real bubblewrap sandbox: the agent writes a CSV and a script, runs it, and
// reads what it made; a skill runs its bundled script from its read-only folder; failures, timeouts, refused
// network connections and a workspace over its limits come back as results the model can act on.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseAllowlist, type Allowlist } from "../../../src/net/allowlist.js";
import type { ToolContext } from "../../../src/runtime/tools/tool.js";
import { createWorkspaceTools } from "../../../src/runtime/tools/workspace/index.js";
import type { Sandbox } from "../../../src/sandbox/types.js";
import { skillFile, startHarness, type Harness } from "../../helpers/harness.js";
import { describeSandbox, probe, testSandbox } from "../../helpers/sandbox.js";
import { callTool, callTools, skillCalls, testWorkspace, type TestWorkspace } from "../../helpers/workspace.js";

let h: Harness;
let ws: TestWorkspace;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

const SUM = `import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
total = sum(float(r["amount"]) for r in rows)
print(f"{len(rows)} rows, total {total:.2f}")
`;

async function start(sandbox: Sandbox, options: { maxBytes?: number; files?: Record<string, string>; approved?: boolean } = {}) {
  const { tools: offered } = createWorkspaceTools({
    workspaceFor: (ctx: ToolContext) => ws.workspaceFor(ctx),
    sandbox,
    searcher: null,
    bashDefaultTimeoutMs: 30_000,
  });
  // `approved`: as if the owner had approved every call (approvals themselves are tested with the runtime).
  const tools = options.approved ? offered.map((t) => ({ ...t, requiresApproval: false })) : offered;
  h = await startHarness({ tools, ...(options.files ? { files: options.files } : {}) });
  ws = testWorkspace(h.root, "alice", { owner: sandbox.user, ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}) });
}

describeSandbox("Bash", () => {
  it("runs a Python script the agent wrote on a CSV in the workspace, and the files it makes can be read", async () => {
    await start(testSandbox([]));
    const csv = "date,amount\n2026-01-03,12.50\n2026-01-09,7.25\n2026-02-01,30\n";
    const results = await callTools(
      h,
      ["Write", { file_path: "data.csv", content: csv }],
      ["Write", { file_path: "sum.py", content: SUM }],
      ["Bash", { command: "python3 sum.py data.csv | tee summary.txt", description: "Sum the amounts" }],
      ["Read", { file_path: "summary.txt" }],
    );
    expect(results).toEqual([
      { content: "File created successfully at: /workspace/data.csv", error: false },
      { content: "File created successfully at: /workspace/sum.py", error: false },
      { content: "3 rows, total 49.75", error: false },
      { content: "     1\t3 rows, total 49.75", error: false },
    ]);
    expect(ws.changes).toContainEqual({ all: true });
  });

  it("lets a command change the files and folders the file tools made", async () => {
    await start(testSandbox([]));
    const results = await callTools(
      h,
      ["Write", { file_path: "notes/day.md", content: "one\n" }],
      ["Bash", { command: "echo two >> notes/day.md && touch notes/new.md && mv notes/day.md notes/renamed.md && ls notes" }],
    );
    expect(results[1]).toEqual({ content: "new.md\nrenamed.md", error: false });
    expect(readFileSync(join(ws.dir, "notes/renamed.md"), "utf8")).toBe("one\ntwo\n");
  });

  it("lets a skill run its bundled script by the folder its instructions name, but not change that folder", async () => {
    const stats = "import sys\nnums = [float(x) for x in open(sys.argv[1]).read().split()]\nprint('mean', sum(nums) / len(nums))\n";
    await start(testSandbox([]), { files: { ...skillFile("stats", "Run scripts/mean.py."), "skills/stats/scripts/mean.py": stats } });
    writeFileSync(join(ws.dir, "numbers.txt"), "1 2 3 4\n");
    const results = await skillCalls(h, "stats", ["Bash", { command: "python3 /skills/stats/scripts/mean.py numbers.txt && touch /skills/stats/x" }]);
    expect(results).toEqual([
      { content: expect.stringMatching(/^Exit code 1\nmean 2\.5\ntouch: cannot touch '\/skills\/stats\/x': Read-only file system$/), error: true },
    ]);
  });

  it("reports a failing command's exit code and output as an error the agent can act on", async () => {
    await start(testSandbox([]));
    expect(await callTool(h, "Bash", { command: "echo partial; echo 'no such table' >&2; exit 3" })).toEqual({
      content: "Exit code 3\npartial\nno such table",
      error: true,
    });
    expect(await callTool(h, "Bash", { command: "true" })).toEqual({ content: "(no output)", error: false });
  });

  it("stops a command at its timeout and says so", { timeout: 20_000 }, async () => {
    await start(testSandbox([]));
    expect(await callTool(h, "Bash", { command: "echo begun; sleep 30", timeout: 1500 })).toEqual({
      content: "begun\nThe command timed out after 1.5 s and was stopped, with every process it started.",
      error: true,
    });
  });

  it("refuses a timeout above the maximum, and background runs", async () => {
    await start(testSandbox([], { maxTimeoutMs: 10_000 }));
    expect(await callTools(h, ["Bash", { command: "ls", timeout: 20_000 }], ["Bash", { command: "ls", run_in_background: true }], ["Bash", { command: "  " }])).toEqual([
      { content: "Bash: timeout 20000 ms is over the maximum of 10000 ms (BASH_MAX_TIMEOUT_MS)", error: true },
      { content: "Bash: run_in_background is not available here; run the command in the foreground (timeout up to 10000 ms)", error: true },
      { content: "Bash: command: must not be empty", error: true },
    ]);
  });

  it("says when output was cut", async () => {
    await start(testSandbox([], { outputBytes: 30_000 }));
    const { content } = await callTool(h, "Bash", { command: "seq 1 50000" });
    expect(content.startsWith("1\n2\n3\n")).toBe(true);
    expect(content).toContain("49999\n50000\n[output cut: it was 288894 bytes; the start and the end are shown.");
  });

  it("warns when a command leaves the workspace over its limits, and Write then refuses to add more", async () => {
    await start(testSandbox([]), { maxBytes: 100_000 });
    const [bash, write] = await callTools(
      h,
      ["Bash", { command: "head -c 200000 /dev/zero > blob.bin && echo made" }],
      ["Write", { file_path: "more.txt", content: "x" }],
    );
    expect(bash).toEqual({
      content: "made\n[the workspace now holds 195.3 KB of at most 97.7 KB (WORKSPACE_MAX_BYTES): delete files; until then Write and Edit refuse to add more]",
      error: false,
    });
    expect(write!.error).toBe(true);
    expect(readFileSync(join(ws.dir, "blob.bin")).length).toBe(200_000);
  });

  it("tells the agent which connections the network allowlist refused, and asks the owner before running", async () => {
    const allow = (parseAllowlist("allowed.example") as { allow: Allowlist }).allow;
    const sandbox = testSandbox([], { network: { allow, socat: probe.ok && probe.socat !== null, resolve: async () => [{ address: "10.1.2.3" }] } });
    const bash = createWorkspaceTools({ workspaceFor: async () => null, sandbox, searcher: null, bashDefaultTimeoutMs: 30_000 }).tools.find(
      (t) => t.spec.name === "Bash",
    )!;
    expect(bash.requiresApproval).toBe(true);
    expect(bash.spec.description).toContain("Only these hosts can be reached, through an HTTP proxy set in HTTP(S)_PROXY: allowed.example.");
    await start(sandbox, { approved: true });
    const result = await callTool(h, "Bash", { command: "python3 -c \"import urllib.request as u; u.urlopen('http://allowed.example/')\" 2>/dev/null; echo tried" });
    expect(result).toEqual({
      content: "tried\n[network: refused allowed.example:80: allowed.example resolves to 10.1.2.3, a private address; the sandbox never connects there]",
      error: false,
    });
  });
});

describe("which workspace tools a deployment offers", () => {
  it("offers Read, Write and Edit everywhere, and says why Bash, Glob and Grep are missing without a sandbox or ripgrep", () => {
    const offered = createWorkspaceTools(
      { workspaceFor: async () => null, sandbox: null, searcher: null, bashDefaultTimeoutMs: 120_000 },
      "bubblewrap (bwrap) is not installed; install bubblewrap",
    );
    expect(offered.tools.map((t) => t.spec.name)).toEqual(["Read", "Write", "Edit"]);
    expect(offered.missing).toEqual([
      { name: "Glob", why: "ripgrep is not installed" },
      { name: "Grep", why: "ripgrep is not installed" },
      { name: "Bash", why: "bubblewrap (bwrap) is not installed; install bubblewrap" },
    ]);
  });

  it("answers a call in a conversation without a workspace with an error, not a throw", async () => {
    const { tools } = createWorkspaceTools({ workspaceFor: async () => null, sandbox: null, searcher: null, bashDefaultTimeoutMs: 120_000 });
    h = await startHarness({ tools });
    expect(await callTool(h, "Read", { file_path: "a.txt" })).toEqual({ content: "Read: this conversation has no workspace, so there are no files to use", error: true });
  });

  it("takes Claude Code's tool names and input fields", () => {
    const sandbox = probe.ok ? testSandbox([]) : null;
    const { tools } = createWorkspaceTools({
      workspaceFor: async () => null,
      sandbox,
      searcher: { search: async () => ({ status: "failed", reason: "" }) },
      bashDefaultTimeoutMs: 120_000,
    });
    const schema = (t: (typeof tools)[number]) => t.spec.input_schema as unknown as { properties: object; required: string[] };
    const fields = Object.fromEntries(tools.map((t) => [t.spec.name, [Object.keys(schema(t).properties), schema(t).required]]));
    expect(fields).toMatchObject({
      Read: [["file_path", "offset", "limit"], ["file_path"]],
      Write: [
        ["file_path", "content"],
        ["file_path", "content"],
      ],
      Edit: [
        ["file_path", "old_string", "new_string", "replace_all"],
        ["file_path", "old_string", "new_string"],
      ],
      Glob: [["pattern", "path"], ["pattern"]],
      Grep: [["pattern", "path", "glob", "type", "output_mode", "-i", "-n", "-A", "-B", "-C", "head_limit", "multiline"], ["pattern"]],
      ...(sandbox ? { Bash: [["command", "timeout", "description"], ["command"]] } : {}),
    });
  });
});
