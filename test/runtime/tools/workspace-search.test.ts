// Glob and Grep through the real runtime, with ripgrep run both ways the gateway runs it: inside a bubblewrap
// sandbox, and (where there is none) as a child process on folders the tool opened. File times are set by the
// test, so "newest first" is checked exactly.
import { mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { systemClock, systemTimers } from "../../../src/runtime/deps.js";
import { createSearcher, type Searcher } from "../../../src/sandbox/ripgrep.js";
import type { ToolContext } from "../../../src/runtime/tools/tool.js";
import { createGlobTool } from "../../../src/runtime/tools/workspace/glob.js";
import { createGrepTool } from "../../../src/runtime/tools/workspace/grep.js";
import { startHarness, type Harness } from "../../helpers/harness.js";
import { probe, testSandbox } from "../../helpers/sandbox.js";
import { callTool, callTools, testWorkspace, type TestWorkspace } from "../../helpers/workspace.js";

const FILES: Array<[path: string, content: string, mtime: number]> = [
  ["src/app.py", "import os\n\ndef main():\n    print('Hello')\n", 1000],
  ["src/util.py", "import sys\nVALUE = 42\n", 2000],
  [".hidden/secret.py", "TOKEN = 'x'\n", 3000],
  ["README.md", "# Demo\nhello world\n", 4000],
  ["docs/guide.md", "Hello again\n", 5000],
  [".git/config", "[core]\nimport = yes\n", 6000],
];

const modes: Array<[string, () => Searcher | null]> = [
  [
    "inside the sandbox",
    () => (probe.ok && probe.ripgrep?.inSandbox ? createSearcher({ ripgrep: probe.ripgrep, sandbox: testSandbox([]), timers: systemTimers, clock: systemClock }) : null),
  ],
  [
    "outside a sandbox, on opened folders",
    () => (probe.ripgrep ? createSearcher({ ripgrep: probe.ripgrep, sandbox: null, timers: systemTimers, clock: systemClock }) : null),
  ],
];

describe.each(modes)("Glob and Grep, ripgrep %s", (_mode, makeSearcher) => {
  const searcher = makeSearcher();
  let h: Harness;
  let ws: TestWorkspace;
  beforeEach(async (context) => {
    if (!searcher) return context.skip();
    const deps = { workspaceFor: (ctx: ToolContext) => ws.workspaceFor(ctx), searcher, searchBytes: 11_000 };
    h = await startHarness({ tools: [createGlobTool(deps), createGrepTool(deps)] });
    ws = testWorkspace(h.root, "alice", { owner: probe.ok ? probe.setup.user : null });
    for (const [path, content, mtime] of FILES) {
      mkdirSync(join(ws.dir, dirname(path)), { recursive: true });
      writeFileSync(join(ws.dir, path), content);
      utimesSync(join(ws.dir, path), mtime, mtime);
    }
  });
  afterEach(async () => {
    await h?.close();
  });

  it("Glob matches across folders with **, newest first, hidden files included and .git left out", async () => {
    expect(await callTool(h, "Glob", { pattern: "**/*.py" })).toEqual({
      content: "/workspace/.hidden/secret.py\n/workspace/src/util.py\n/workspace/src/app.py",
      error: false,
    });
    expect((await callTool(h, "Glob", { pattern: "**/config" })).content).toBe("No files found");
  });

  it("Glob keeps * inside one folder, and searches the folder named by path or by an absolute pattern", async () => {
    expect(
      await callTools(
        h,
        ["Glob", { pattern: "*.md" }],
        ["Glob", { pattern: "*.py", path: "src" }],
        ["Glob", { pattern: "/workspace/src/*.py" }],
        ["Glob", { pattern: "docs/*.md", path: "undefined" }],
      ),
    ).toEqual([
      { content: "/workspace/README.md", error: false },
      { content: "/workspace/src/util.py\n/workspace/src/app.py", error: false },
      { content: "/workspace/src/util.py\n/workspace/src/app.py", error: false },
      { content: "/workspace/docs/guide.md", error: false },
    ]);
  });

  it("Glob shows at most 100 paths and says the rest were cut", async () => {
    mkdirSync(join(ws.dir, "many"));
    for (let i = 0; i < 120; i++) writeFileSync(join(ws.dir, "many", `f${i}.txt`), "");
    const { content } = await callTool(h, "Glob", { pattern: "many/*.txt" });
    const lines = content.split("\n");
    expect(lines).toHaveLength(101);
    expect(lines[100]).toBe("(Results are truncated: 100 of 120 shown. Use a more specific path or pattern.)");
  });

  it("Glob refuses a path outside the workspace, and a file as its folder", async () => {
    expect(await callTools(h, ["Glob", { pattern: "*", path: "/etc" }], ["Glob", { pattern: "*", path: "README.md" }])).toEqual([
      { content: expect.stringContaining('Glob: "/etc" is outside the workspace'), error: true },
      { content: "Glob: /workspace/README.md is a file; path must be a folder", error: true },
    ]);
  });

  it("Grep lists the matching files, newest first", async () => {
    expect(await callTool(h, "Grep", { pattern: "import" })).toEqual({ content: "Found 2 files\n/workspace/src/util.py\n/workspace/src/app.py", error: false });
  });

  it("Grep shows matching lines with numbers and context, counts, and ignores case on request", async () => {
    expect(
      await callTools(
        h,
        ["Grep", { pattern: "import", output_mode: "content" }],
        ["Grep", { pattern: "def main", output_mode: "content", "-A": 1, "-n": false }],
        ["Grep", { pattern: "hello", output_mode: "count", "-i": true }],
      ),
    ).toEqual([
      { content: "/workspace/src/app.py:1:import os\n/workspace/src/util.py:1:import sys", error: false },
      { content: "/workspace/src/app.py:def main():\n/workspace/src/app.py:    print('Hello')", error: false },
      { content: "/workspace/README.md:1\n/workspace/docs/guide.md:1\n/workspace/src/app.py:1\n\nFound 3 total occurrences across 3 files.", error: false },
    ]);
  });

  it("Grep filters files by glob and by type, searches one file, and spans lines with multiline", async () => {
    expect(
      await callTools(
        h,
        ["Grep", { pattern: "ello", glob: "*.md" }],
        ["Grep", { pattern: "=", type: "py" }],
        ["Grep", { pattern: "VALUE", path: "src/util.py", output_mode: "content" }],
        ["Grep", { pattern: "main\\(\\):\\n\\s+print", multiline: true }],
      ),
    ).toEqual([
      { content: "Found 2 files\n/workspace/docs/guide.md\n/workspace/README.md", error: false },
      { content: "Found 2 files\n/workspace/.hidden/secret.py\n/workspace/src/util.py", error: false },
      { content: "/workspace/src/util.py:2:VALUE = 42", error: false },
      { content: "Found 1 file\n/workspace/src/app.py", error: false },
    ]);
  });

  it("Grep shows the first 250 entries unless head_limit says otherwise, and says what it cut", async () => {
    writeFileSync(join(ws.dir, "log.txt"), Array.from({ length: 300 }, (_, i) => `error ${i + 1}`).join("\n"));
    const [all, few] = await callTools(
      h,
      ["Grep", { pattern: "^error", output_mode: "content", path: "log.txt" }],
      ["Grep", { pattern: "^error", output_mode: "content", path: "log.txt", head_limit: 2 }],
    );
    const lines = all!.content.split("\n");
    expect(lines).toHaveLength(251);
    expect(lines[249]).toBe("/workspace/log.txt:250:error 250");
    expect(lines[250]).toBe("[showing the first 250 of 300 lines; narrow the pattern, path or glob, or set head_limit]");
    expect(few!.content).toBe("/workspace/log.txt:1:error 1\n/workspace/log.txt:2:error 2\n[showing the first 2 of 300 lines; narrow the pattern, path or glob]");
  });

  it("keeps whole paths when ripgrep's own output was cut, and says there were more", async () => {
    mkdirSync(join(ws.dir, "many"));
    for (let i = 0; i < 300; i++) writeFileSync(join(ws.dir, "many", `file-with-a-rather-long-name-for-this-test-${String(i).padStart(3, "0")}.txt`), "needle\n");
    const { content } = await callTool(h, "Grep", { pattern: "needle", path: "many" });
    const lines = content.split("\n");
    const files = lines.slice(1, -1);
    expect(files.length).toBeGreaterThan(50);
    expect(files.length).toBeLessThan(300);
    for (const file of files) expect(file).toMatch(/^\/workspace\/many\/file-with-a-rather-long-name-for-this-test-\d{3}\.txt$/);
    expect(lines[lines.length - 1]).toBe(`[showing the first ${files.length} of ${files.length}+ files; narrow the pattern, path or glob, or set head_limit]`);
  });

  it("Grep reports a bad pattern as ripgrep explains it, and finds nothing without an error", async () => {
    const [bad, none] = await callTools(h, ["Grep", { pattern: "interface{" }], ["Grep", { pattern: "no such text anywhere" }]);
    expect(bad).toEqual({ content: expect.stringMatching(/^Grep: regex parse error/), error: true });
    expect(none).toEqual({ content: "No files found", error: false });
  });

  it("Glob and Grep take a pattern, glob or type that starts with a dash as a value, never as an option", async () => {
    writeFileSync(join(ws.dir, "flags.txt"), "use --files here\n");
    expect(
      await callTools(
        h,
        ["Grep", { pattern: "--files" }],
        ["Grep", { pattern: "x", type: "--files" }],
        ["Grep", { pattern: "use", glob: "--pre=touch" }],
        ["Grep", { pattern: "=" }],
        ["Glob", { pattern: "--pre=x/*" }],
      ),
    ).toEqual([
      { content: "Found 1 file\n/workspace/flags.txt", error: false },
      { content: "Grep: unrecognized file type: --files", error: true },
      { content: "No files found", error: false },
      { content: "Found 2 files\n/workspace/.hidden/secret.py\n/workspace/src/util.py", error: false },
      { content: "No files found", error: false },
    ]);
  });

  it("Grep refuses a path outside the workspace", async () => {
    expect(await callTool(h, "Grep", { pattern: "root", path: "/etc/passwd" })).toEqual({
      content: expect.stringContaining('Grep: "/etc/passwd" is outside the workspace'),
      error: true,
    });
  });
});
