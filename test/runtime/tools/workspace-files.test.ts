// Read, Write and Edit as an agent uses them: main calls them through the real runtime (strict fake model, real
// store), and each test asserts the tool results the model got back and the files on disk. Their behaviour follows
// Claude Code's tools of the same names (numbered lines, unique old_string, empty old_string creates).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { ToolContext } from "../../../src/runtime/tools/tool.js";
import { createEditTool } from "../../../src/runtime/tools/workspace/edit.js";
import { createReadTool } from "../../../src/runtime/tools/workspace/read.js";
import { createWriteTool } from "../../../src/runtime/tools/workspace/write.js";
import { startHarness, type Harness } from "../../helpers/harness.js";
import { callTool, callTools, testWorkspace, type TestWorkspace } from "../../helpers/workspace.js";

let h: Harness;
let ws: TestWorkspace;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

async function start(options: { maxBytes?: number; maxFiles?: number; readChars?: number; usage?: () => Promise<{ bytes: number; files: number }> } = {}) {
  // The workspace lives under the harness's folder, which exists once the harness has started.
  const deps = { workspaceFor: (ctx: ToolContext) => ws.workspaceFor(ctx), owner: null };
  h = await startHarness({
    tools: [createReadTool({ ...deps, ...(options.readChars ? { maxChars: options.readChars } : {}) }), createWriteTool(deps), createEditTool(deps)],
  });
  ws = testWorkspace(h.root, "alice", options);
}

const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\n") + "\n";

describe("Write and Read", () => {
  it("writes a file (making its folders) and reads it back numbered like cat -n", async () => {
    await start();
    const [wrote, read] = await callTools(
      h,
      ["Write", { file_path: "notes/todo.md", content: "buy milk\n\tcall Ann\n" }],
      ["Read", { file_path: "/workspace/notes/todo.md" }],
    );
    expect(wrote).toEqual({ content: "File created successfully at: /workspace/notes/todo.md", error: false });
    expect(read).toEqual({ content: "     1\tbuy milk\n     2\t\tcall Ann", error: false });
    expect(readFileSync(join(ws.dir, "notes/todo.md"), "utf8")).toBe("buy milk\n\tcall Ann\n");
    expect(ws.changes).toEqual([{ paths: ["/workspace/notes/todo.md"] }]);
  });

  it("says a file was updated when Write replaces it", async () => {
    await start();
    writeFileSync(join(ws.dir, "a.txt"), "old");
    expect(await callTool(h, "Write", { file_path: "a.txt", content: "new" })).toEqual({
      content: "The file /workspace/a.txt has been updated successfully.",
      error: false,
    });
    expect(readFileSync(join(ws.dir, "a.txt"), "utf8")).toBe("new");
  });

  it("reads `limit` lines from line `offset`, and says where the file goes on", async () => {
    await start();
    writeFileSync(join(ws.dir, "ten.txt"), lines(10));
    expect((await callTool(h, "Read", { file_path: "ten.txt", offset: 3, limit: 2 })).content).toBe(
      "     3\tline 3\n     4\tline 4\n[/workspace/ten.txt continues after line 4; read on with offset=5]",
    );
    expect((await callTool(h, "Read", { file_path: "ten.txt", offset: "9", limit: "5" })).content).toBe("     9\tline 9\n    10\tline 10");
  });

  it("reads 2000 lines by default and cuts lines longer than 2000 characters", async () => {
    await start();
    writeFileSync(join(ws.dir, "long.txt"), lines(2500));
    writeFileSync(join(ws.dir, "wide.txt"), `${"x".repeat(2500)}\nshort\n`);
    const [long, wide] = await callTools(h, ["Read", { file_path: "long.txt" }], ["Read", { file_path: "wide.txt" }]);
    const shown = long!.content.split("\n");
    expect(shown[0]).toBe("     1\tline 1");
    expect(shown[1999]).toBe("  2000\tline 2000");
    expect(shown[2000]).toBe("[/workspace/long.txt continues after line 2000; read on with offset=2001]");
    expect(wide!.content).toBe(`     1\t${"x".repeat(2000)}… [line cut at 2000 characters]\n     2\tshort`);
  });

  it("cuts a result that grows past its character cap, saying where to read on", async () => {
    await start({ readChars: 100 });
    writeFileSync(join(ws.dir, "f.txt"), lines(50));
    expect((await callTool(h, "Read", { file_path: "f.txt" })).content).toBe(
      `${[1, 2, 3, 4, 5, 6, 7].map((n) => `${String(n).padStart(6)}\tline ${n}`).join("\n")}\n[cut after line 7: the result reached 100 characters; read on with offset=8]`,
    );
  });

  it("tells an empty file, an offset past the end, a missing file and a folder apart", async () => {
    await start();
    writeFileSync(join(ws.dir, "empty.txt"), "");
    writeFileSync(join(ws.dir, "two.txt"), "a\nb\n");
    mkdirSync(join(ws.dir, "folder"));
    expect(
      await callTools(
        h,
        ["Read", { file_path: "empty.txt" }],
        ["Read", { file_path: "two.txt", offset: 5 }],
        ["Read", { file_path: "nope.txt" }],
        ["Read", { file_path: "folder" }],
      ),
    ).toEqual([
      { content: "(/workspace/empty.txt exists but is empty)", error: false },
      { content: "(/workspace/two.txt has 2 lines; offset 5 is past its end)", error: false },
      { content: "Read: file does not exist: /workspace/nope.txt", error: true },
      { content: "Read: /workspace/folder is a folder, not a file", error: true },
    ]);
  });

  it("refuses a binary file, and a FIFO without waiting on it", { timeout: 10_000 }, async () => {
    await start();
    writeFileSync(join(ws.dir, "image.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]));
    execFileSync("mkfifo", [join(ws.dir, "pipe")]);
    expect(await callTools(h, ["Read", { file_path: "image.png" }], ["Read", { file_path: "pipe" }], ["Write", { file_path: "pipe", content: "x" }])).toEqual([
      { content: "Read: /workspace/image.png is a binary file; Read shows text files only", error: true },
      { content: "Read: /workspace/pipe is a FIFO (named pipe); only regular files can be used here", error: true },
      { content: "Write: /workspace/pipe is a FIFO (named pipe); only regular files can be used here", error: true },
    ]);
  });

  it("names the field that is wrong in a call", async () => {
    await start();
    expect(await callTools(h, ["Write", { file_path: "a.txt" }], ["Read", { file_path: "a.txt", offset: "soon" }], ["Read", {}])).toEqual([
      { content: "Write: content: must be the file's whole content, a string", error: true },
      { content: "Read: offset: Invalid input: expected number, received string", error: true },
      { content: "Read: file_path: must be the file's path, a string", error: true },
    ]);
  });
});

describe("Edit", () => {
  it("replaces a string that occurs once and shows the edited part", async () => {
    await start();
    writeFileSync(join(ws.dir, "app.py"), "def main():\n    print('hi')\n\nmain()\n");
    const edited = await callTool(h, "Edit", { file_path: "app.py", old_string: "print('hi')", new_string: "print('hello')" });
    expect(edited).toEqual({
      content:
        "The file /workspace/app.py has been updated successfully. The edited part now reads:\n" +
        "     1\tdef main():\n     2\t    print('hello')\n     3\t\n     4\tmain()\n     5\t",
      error: false,
    });
    expect(readFileSync(join(ws.dir, "app.py"), "utf8")).toBe("def main():\n    print('hello')\n\nmain()\n");
    expect(ws.changes).toEqual([{ paths: ["/workspace/app.py"] }]);
  });

  it("refuses a string that occurs more than once unless replace_all, and then replaces every one", async () => {
    await start();
    writeFileSync(join(ws.dir, "c.txt"), "x = 1\ny = x\nz = x\n");
    const refused = await callTool(h, "Edit", { file_path: "c.txt", old_string: "x", new_string: "n" });
    expect(refused).toEqual({
      content:
        "Edit: found 3 matches of the string to replace in /workspace/c.txt, but replace_all is false. To replace all occurrences, " +
        "set replace_all to true. To replace only one, give more surrounding context so it is unique.\nString: x",
      error: true,
    });
    expect(readFileSync(join(ws.dir, "c.txt"), "utf8")).toBe("x = 1\ny = x\nz = x\n");
    expect(await callTool(h, "Edit", { file_path: "c.txt", old_string: "x", new_string: "n", replace_all: true })).toEqual({
      content: "The file /workspace/c.txt has been updated. All 3 occurrences of old_string were replaced with new_string.",
      error: false,
    });
    expect(readFileSync(join(ws.dir, "c.txt"), "utf8")).toBe("n = 1\ny = n\nz = n\n");
  });

  it("refuses a string that is not there, and an edit that changes nothing", async () => {
    await start();
    writeFileSync(join(ws.dir, "c.txt"), "hello\n");
    expect(
      await callTools(
        h,
        ["Edit", { file_path: "c.txt", old_string: "bye", new_string: "ciao" }],
        ["Edit", { file_path: "c.txt", old_string: "hello", new_string: "hello" }],
      ),
    ).toEqual([
      { content: "Edit: string to replace not found in /workspace/c.txt.\nString: bye", error: true },
      { content: "Edit: no changes to make: old_string and new_string are exactly the same.", error: true },
    ]);
    expect(readFileSync(join(ws.dir, "c.txt"), "utf8")).toBe("hello\n");
  });

  it("creates a missing file from an empty old_string, but will not overwrite an existing one that way", async () => {
    await start();
    writeFileSync(join(ws.dir, "exists.txt"), "keep me");
    expect(
      await callTools(
        h,
        ["Edit", { file_path: "new/file.txt", old_string: "", new_string: "fresh\n" }],
        ["Edit", { file_path: "exists.txt", old_string: "", new_string: "clobbered" }],
        ["Edit", { file_path: "missing.txt", old_string: "a", new_string: "b" }],
      ),
    ).toEqual([
      { content: "File created successfully at: /workspace/new/file.txt", error: false },
      { content: "Edit: cannot create /workspace/exists.txt: the file already exists. Give the text to replace in old_string.", error: true },
      { content: "Edit: file does not exist: /workspace/missing.txt. Use an empty old_string to create it, or Write.", error: true },
    ]);
    expect(readFileSync(join(ws.dir, "new/file.txt"), "utf8")).toBe("fresh\n");
    expect(readFileSync(join(ws.dir, "exists.txt"), "utf8")).toBe("keep me");
  });
});

describe("the workspace's limits", () => {
  it("refuses a write past WORKSPACE_MAX_BYTES, and lets a smaller file replace a big one", async () => {
    await start({ maxBytes: 1000 });
    writeFileSync(join(ws.dir, "big.txt"), "x".repeat(900));
    expect(await callTool(h, "Write", { file_path: "more.txt", content: "y".repeat(200) })).toEqual({
      content: "Write: the workspace would hold 1.1 KB of at most 1000 bytes (WORKSPACE_MAX_BYTES); delete files you no longer need (Bash: rm) and try again",
      error: true,
    });
    expect(existsSync(join(ws.dir, "more.txt"))).toBe(false);
    expect((await callTool(h, "Write", { file_path: "big.txt", content: "small" })).error).toBe(false);
  });

  it("refuses a new file past WORKSPACE_MAX_FILES, but lets existing files change", async () => {
    await start({ maxFiles: 2 });
    writeFileSync(join(ws.dir, "a.txt"), "a");
    writeFileSync(join(ws.dir, "b.txt"), "b");
    expect(await callTools(h, ["Write", { file_path: "c.txt", content: "c" }], ["Edit", { file_path: "a.txt", old_string: "a", new_string: "A" }])).toEqual([
      { content: "Write: the workspace would hold 3 files of at most 2 (WORKSPACE_MAX_FILES); delete files you no longer need (Bash: rm) and try again", error: true },
      { content: expect.stringContaining("The file /workspace/a.txt has been updated successfully."), error: false },
    ]);
  });

  it("asks the workspace's keeper what it holds, when the keeper can tell", async () => {
    await start({ maxFiles: 10, usage: async () => ({ bytes: 0, files: 10 }) });
    expect(await callTool(h, "Write", { file_path: "one.txt", content: "1" })).toEqual({
      content: "Write: the workspace would hold 11 files of at most 10 (WORKSPACE_MAX_FILES); delete files you no longer need (Bash: rm) and try again",
      error: true,
    });
  });
});
