// send_file's `path` in the workspace, through the real runtime: a file made there is sent; every way out of the
// workspace is a tool error naming the path; limits are answered before anything is read or stored. The harness's
// sink has no file upload, so what reaches it is the text that names the file (the fallback every such sink gets).
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/runtime/tools/tool.js";
import { png } from "../../helpers/files.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../../helpers/harness.js";
import { resultTexts } from "../../helpers/requests.js";
import { callTool, testWorkspace, type TestWorkspace, type Call } from "../../helpers/workspace.js";

let h: Harness;
let ws: TestWorkspace;

async function boot(options: { maxFileBytes?: number; maxSessionFileBytes?: number } = {}): Promise<void> {
  h = await startHarness({ ...options, sendFile: { workspaceFor: (ctx: ToolContext) => ws.workspaceFor(ctx) } });
  ws = testWorkspace(h.root, "alice");
}

/** Main calls `calls` in one message; the results it got back, and what the chat was shown. */
async function sendFiles(...calls: Call[]): Promise<{ results: Array<{ content: string; error: boolean }>; shown: string[] }> {
  let results: Array<{ content: string; error: boolean }> = [];
  h.fake.script(reply(...calls.map(([name, input]) => toolUse(name, input))), (req) => {
    results = resultTexts(req);
    return text("done");
  });
  const shown = await h.say("go");
  expect(h.fake.rejected()).toEqual([]);
  return { results, shown };
}

afterEach(async () => {
  await h.close();
});

describe("send_file with a workspace path", () => {
  it("sends a file made in the workspace, by an absolute or a relative path", async () => {
    await boot();
    mkdirSync(join(ws.dir, "out"));
    writeFileSync(join(ws.dir, "out", "chart.png"), await png(120, 80));
    writeFileSync(join(ws.dir, "notes.md"), "# Notes\n");
    const { results, shown } = await sendFiles(
      ["send_file", { filename: "chart.png", path: "/workspace/out/chart.png", caption: "The chart" }],
      ["send_file", { filename: "notes.md", path: "notes.md" }],
    );
    const [chart, notes] = results;
    expect(chart).toEqual({ error: false, content: expect.stringMatching(/^Sent chart\.png \(image\/png, \d+ bytes\) to the chat/) });
    expect(notes).toEqual({ error: false, content: expect.stringMatching(/^Sent notes\.md \(text\/markdown, 8 bytes\)/) });
    // Each file once, in the order sent, before the answer of the turn that sent them.
    expect(shown).toEqual([
      expect.stringMatching(/^main: 📎 chart\.png \(image\/png, \d+ bytes\) \(kept with this conversation\)\nThe chart$/),
      "main: 📎 notes.md (text/markdown, 8 bytes) (kept with this conversation)",
      "main: done",
    ]);
  });

  it("refuses paths that leave the workspace: `..`, a host path, a symlink out", async () => {
    await boot();
    const bob = testWorkspace(h.root, "bob");
    writeFileSync(join(bob.dir, "diary.txt"), "bob's diary");
    symlinkSync("/etc/hostname", join(ws.dir, "host"));
    symlinkSync("../bob", join(ws.dir, "bobs"));
    const { results } = await sendFiles(
      ["send_file", { filename: "d.txt", path: "../bob/diary.txt" }],
      ["send_file", { filename: "p", path: "/etc/passwd" }],
      ["send_file", { filename: "h", path: "host" }],
      ["send_file", { filename: "d.txt", path: "bobs/diary.txt" }],
    );
    for (const result of results) expect(result).toEqual({ error: true, content: expect.stringContaining("is outside the workspace") });
    expect(h.seen.filter((m) => m.text.startsWith("📎"))).toEqual([]);
    expect(await h.store.files.ofSession("console:t")).toEqual([]);
  });

  it("names a missing file, and a folder", async () => {
    await boot();
    mkdirSync(join(ws.dir, "out"));
    const [missing, folder] = (await sendFiles(["send_file", { filename: "x.csv", path: "x.csv" }], ["send_file", { filename: "out", path: "out" }])).results;
    expect(missing).toEqual({ error: true, content: expect.stringContaining('"x.csv" is neither a file of this conversation nor in the workspace') });
    expect(folder).toEqual({ error: true, content: expect.stringContaining("/workspace/out is a folder, not a file") });
  });

  it("refuses a workspace file past MAX_FILE_BYTES before reading it, and one past the conversation's total", async () => {
    await boot({ maxFileBytes: 1024, maxSessionFileBytes: 1500 });
    writeFileSync(join(ws.dir, "big.bin"), Buffer.alloc(4096, 1));
    writeFileSync(join(ws.dir, "a.txt"), "a".repeat(1000));
    writeFileSync(join(ws.dir, "b.txt"), "b".repeat(1000));
    const { results, shown } = await sendFiles(
      ["send_file", { filename: "big.bin", path: "big.bin" }],
      ["send_file", { filename: "a.txt", path: "a.txt" }],
      ["send_file", { filename: "b.txt", path: "b.txt" }],
    );
    const [big, a, b] = results;
    expect(shown).toEqual(["main: 📎 a.txt (text/plain, 1000 bytes) (kept with this conversation)", "main: done"]);
    expect(big).toEqual({ error: true, content: "send_file: /workspace/big.bin is 4 KB; files can be at most 1 KB (MAX_FILE_BYTES)" });
    expect(a!.error).toBe(false);
    expect(b).toEqual({ error: true, content: expect.stringContaining(`"b.txt" would take this conversation's files over 1.5 KB`) });
    expect((await h.store.files.ofSession("console:t")).map((f) => f.name)).toEqual(["a.txt"]);
  });

  it("without a workspace, says a path must name a file of the conversation", async () => {
    h = await startHarness({ sendFile: true });
    expect(await callTool(h, "send_file", { filename: "r.csv", path: "out/r.csv" })).toEqual({
      error: true,
      content: 'send_file: "out/r.csv" is not a file of this conversation (give a file\'s id or name as its note shows it); this gateway has no workspace',
    });
  });
});
