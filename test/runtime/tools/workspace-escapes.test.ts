// Every way out of the workspace a path can try, each its own test: `..`, absolute host paths, symlinks to
// files and folders outside (absolute and relative), symlinks in the middle of a path, loops, the skill's
// read-only folder. Driven through the real runtime; a refusal is a tool error, and nothing outside changes.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/runtime/tools/tool.js";
import { createEditTool } from "../../../src/runtime/tools/workspace/edit.js";
import { createReadTool } from "../../../src/runtime/tools/workspace/read.js";
import { createWriteTool } from "../../../src/runtime/tools/workspace/write.js";
import { skillFile, startHarness, type Harness } from "../../helpers/harness.js";
import { callTool, skillCalls, testWorkspace, type TestWorkspace } from "../../helpers/workspace.js";

let h: Harness;
let ws: TestWorkspace;
let bob: TestWorkspace;
let database: string;
const outside = (text: string) => expect.stringMatching(new RegExp(`is outside the workspace: files can be used only under /workspace${text}`));

beforeEach(async () => {
  const deps = { workspaceFor: (ctx: ToolContext) => ws.workspaceFor(ctx), owner: null };
  h = await startHarness({
    files: { ...skillFile("stats", "Compute statistics."), "skills/stats/scripts/stats.py": "print('stats')\n" },
    tools: [createReadTool(deps), createWriteTool(deps), createEditTool(deps)],
  });
  ws = testWorkspace(h.root, "alice");
  bob = testWorkspace(h.root, "bob");
  writeFileSync(join(bob.dir, "diary.txt"), "bob's diary");
  database = join(h.root, "data", "switchboard.db");
});
afterEach(async () => {
  await h.close();
});

describe("paths cannot leave the workspace", () => {
  it("refuses `..` out of the workspace into a sibling's", async () => {
    expect(await callTool(h, "Read", { file_path: "../bob/diary.txt" })).toEqual({
      content: expect.stringContaining('Read: "../bob/diary.txt" is outside the workspace'),
      error: true,
    });
  });

  it("refuses `..` that climbs past the root to the database", async () => {
    const result = await callTool(h, "Read", { file_path: `/workspace/../../../..${database}` });
    expect(result).toEqual({ content: expect.stringContaining("is outside the workspace"), error: true });
  });

  it("refuses an absolute path on this machine (the database)", async () => {
    expect(await callTool(h, "Read", { file_path: database })).toEqual({ content: outside(""), error: true });
  });

  it("refuses a symlink to a file outside, given by its absolute host path", async () => {
    symlinkSync(database, join(ws.dir, "db"));
    expect(await callTool(h, "Read", { file_path: "db" })).toEqual({ content: expect.stringContaining('Read: "db" is outside the workspace'), error: true });
  });

  it("refuses a relative symlink that climbs out to a sibling workspace", async () => {
    symlinkSync("../bob/diary.txt", join(ws.dir, "diary"));
    expect(await callTool(h, "Read", { file_path: "diary" })).toEqual({ content: expect.stringContaining("is outside the workspace"), error: true });
  });

  it("refuses a path through a symlinked folder that points outside", async () => {
    symlinkSync("/etc", join(ws.dir, "etc"));
    expect(await callTool(h, "Read", { file_path: "etc/passwd" })).toEqual({ content: expect.stringContaining('"etc/passwd" is outside the workspace'), error: true });
  });

  it("refuses to Write through a symlink to a file outside, and leaves that file alone", async () => {
    symlinkSync(join(bob.dir, "diary.txt"), join(ws.dir, "notes.txt"));
    expect((await callTool(h, "Write", { file_path: "notes.txt", content: "overwritten" })).error).toBe(true);
    expect(readFileSync(join(bob.dir, "diary.txt"), "utf8")).toBe("bob's diary");
  });

  it("refuses to Write into a symlinked folder that points outside, and creates nothing there", async () => {
    symlinkSync(bob.dir, join(ws.dir, "shared"));
    expect((await callTool(h, "Write", { file_path: "shared/planted.txt", content: "x" })).error).toBe(true);
    expect((await callTool(h, "Write", { file_path: "shared/sub/planted.txt", content: "x" })).error).toBe(true);
    expect(existsSync(join(bob.dir, "planted.txt"))).toBe(false);
    expect(existsSync(join(bob.dir, "sub"))).toBe(false);
  });

  it("refuses to Edit through a symlink to a file outside", async () => {
    symlinkSync(join(bob.dir, "diary.txt"), join(ws.dir, "d.txt"));
    expect((await callTool(h, "Edit", { file_path: "d.txt", old_string: "diary", new_string: "secrets" })).error).toBe(true);
    expect(readFileSync(join(bob.dir, "diary.txt"), "utf8")).toBe("bob's diary");
  });

  it("refuses a dangling symlink whose target would be created outside", async () => {
    symlinkSync(join(bob.dir, "new.txt"), join(ws.dir, "new.txt"));
    expect((await callTool(h, "Write", { file_path: "new.txt", content: "x" })).error).toBe(true);
    expect(existsSync(join(bob.dir, "new.txt"))).toBe(false);
  });

  it("refuses system paths and the gateway's own files", async () => {
    for (const path of ["/etc/passwd", "/proc/self/environ", join(h.root, "skills/stats/SKILL.md")]) {
      expect(await callTool(h, "Read", { file_path: path }), path).toEqual({ content: expect.stringContaining("is outside the workspace"), error: true });
    }
    expect((await callTool(h, "Write", { file_path: "/etc/cron.d/x", content: "x" })).error).toBe(true);
    expect(existsSync("/etc/cron.d/x")).toBe(false);
  });

  it("ends a symlink loop with an error instead of hanging", async () => {
    symlinkSync("b", join(ws.dir, "a"));
    symlinkSync("a", join(ws.dir, "b"));
    expect(await callTool(h, "Read", { file_path: "a" })).toEqual({ content: 'Read: "a" goes through too many symlinks', error: true });
  });

  it("refuses a NUL in a path", async () => {
    expect(await callTool(h, "Read", { file_path: "a\u0000b" })).toEqual({ content: "Read: the path contains a NUL character", error: true });
  });

  it("follows symlinks that stay inside, relative or by the workspace's own path", async () => {
    mkdirSync(join(ws.dir, "data"));
    writeFileSync(join(ws.dir, "data/2026.csv"), "a,b\n1,2\n");
    symlinkSync("data/2026.csv", join(ws.dir, "latest.csv"));
    symlinkSync("/workspace/data", join(ws.dir, "current"));
    expect(await callTool(h, "Read", { file_path: "latest.csv" })).toEqual({ content: "     1\ta,b\n     2\t1,2", error: false });
    expect(await callTool(h, "Read", { file_path: "current/../data/./2026.csv", limit: 1 })).toEqual({
      content: "     1\ta,b\n[/workspace/data/2026.csv continues after line 1; read on with offset=2]",
      error: false,
    });
  });
});

describe("a skill's own folder", () => {
  it("is readable at /skills/<name>, and read-only", async () => {
    const results = await skillCalls(
      h,
      "stats",
      ["Read", { file_path: "/skills/stats/scripts/stats.py" }],
      ["Write", { file_path: "/skills/stats/scripts/stats.py", content: "print('hacked')\n" }],
      ["Edit", { file_path: "/skills/stats/SKILL.md", old_string: "Compute", new_string: "Leak" }],
    );
    expect(results).toEqual([
      { content: "     1\tprint('stats')", error: false },
      { content: "Write: /skills/stats/scripts/stats.py is in /skills/stats, which is read-only; write to a file under /workspace instead", error: true },
      { content: "Edit: /skills/stats/SKILL.md is in /skills/stats, which is read-only; write to a file under /workspace instead", error: true },
    ]);
    expect(readFileSync(join(h.root, "skills/stats/scripts/stats.py"), "utf8")).toBe("print('stats')\n");
  });

  it("is not visible to main, which has no skill folder", async () => {
    expect(await callTool(h, "Read", { file_path: "/skills/stats/SKILL.md" })).toEqual({ content: outside(""), error: true });
  });

  it("cannot be left through a symlink inside it", async () => {
    symlinkSync(database, join(h.root, "skills/stats/db"));
    const [result] = await skillCalls(h, "stats", ["Read", { file_path: "/skills/stats/db" }]);
    expect(result).toEqual({
      content: expect.stringContaining("is outside the workspace: files can be used only under /workspace, /skills/stats (read-only)"),
      error: true,
    });
  });
});
