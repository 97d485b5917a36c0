// read_skill_file against hostile skill folders: a FIFO that would block the process, a symlink to a
// device, a symlink out of the folder, a file too big to read whole. Driven through the real runtime: main
// hands over to the skill, the skill asks for the file, and the tool result is what the model sees.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Catalog } from "../../src/catalog/definition.js";
import { createReadSkillFileTool } from "../../src/runtime/tools/read-skill-file.js";
import type { ToolContext } from "../../src/runtime/tools/tool.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { resultTexts } from "../helpers/requests.js";

let h: Harness;
let writer: ChildProcess | null = null;
afterEach(async () => {
  writer?.kill("SIGKILL");
  writer = null;
  await h?.close();
  h = undefined!;
});

async function withReader(): Promise<string> {
  // A history bound above the tool's own cap, so the model sees what the tool read (the bound is long-results.test.ts's).
  h = await startHarness({ files: skillFile("reader", "Read what you are asked to."), toolResultMaxTokens: 100_000 });
  return join(h.root, "skills/reader");
}

/** The tool results the skill got for reading `paths`, in order. */
async function read(...paths: string[]): Promise<Array<{ content: string; error: boolean }>> {
  let results: Array<{ content: string; error: boolean }> = [];
  h.fake.script(
    reply(toolUse("use_skill", { name: "reader", message: "read" })),
    reply(...paths.map((path, i) => toolUse("read_skill_file", { path }, `toolu_read_${i}`))),
    (req) => {
      results = resultTexts(req);
      return reply(toolUse("complete", { result: "read" }));
    },
    text("done"),
  );
  expect(await h.say("read them")).toEqual(["main: done"]);
  expect(h.fake.rejected()).toEqual([]);
  return results;
}

describe("read_skill_file reads regular files only", () => {
  it("refuses a FIFO without opening it, so a pipe nobody writes to cannot block the process", { timeout: 10_000 }, async () => {
    const folder = await withReader();
    const fifo = join(folder, "pipe");
    execFileSync("mkfifo", [fifo]);
    symlinkSync("pipe", join(folder, "to-pipe"));
    // A writer that opens the FIFO again and again, noting each time a reader let it through. Opening for
    // writing waits for a reader, so the notes count the tool's opens; and a blocking read (the old code)
    // gets an empty file back instead of blocking the test's own event loop forever.
    const opened = join(h.root, "opened.log");
    writeFileSync(opened, "");
    writer = spawn("sh", ["-c", 'while :; do : > "$1"; echo opened >> "$2"; done', "sh", fifo, opened], { stdio: "ignore" });
    expect(await read("pipe", "to-pipe")).toEqual([
      { content: '"pipe" is a FIFO (named pipe), not a regular file; read_skill_file reads regular files only', error: true },
      { content: '"to-pipe" is a FIFO (named pipe), not a regular file; read_skill_file reads regular files only', error: true },
    ]);
    expect(readFileSync(opened, "utf8")).toBe(""); // the writer is still waiting: nobody opened the FIFO
  });

  it("refuses a symlink to /dev/zero and a symlink that escapes the folder", async () => {
    const folder = await withReader();
    symlinkSync("/dev/zero", join(folder, "zero"));
    const outside = mkdtempSync(join(tmpdir(), "switchboard-outside-"));
    try {
      writeFileSync(join(outside, "secret.txt"), "secret");
      symlinkSync(join(outside, "secret.txt"), join(folder, "escape.txt"));
      symlinkSync(outside, join(folder, "elsewhere"));
      expect(await read("zero", "escape.txt", "elsewhere/secret.txt", "references/../../../etc/passwd")).toEqual([
        { content: '"zero" leads outside the skill folder (a symlink); it cannot be read', error: true },
        { content: '"escape.txt" leads outside the skill folder (a symlink); it cannot be read', error: true },
        { content: '"elsewhere/secret.txt" leads outside the skill folder (a symlink); it cannot be read', error: true },
        { content: '"references/../../../etc/passwd" is outside the skill folder; use a path relative to it without ".."', error: true },
      ]);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it("reads at most 256 KB of a 5 MB file and says it was cut", async () => {
    const folder = await withReader();
    writeFileSync(join(folder, "big.txt"), "a".repeat(5 * 1024 * 1024));
    const [result] = await read("big.txt");
    expect(result!.error).toBe(false);
    const [kept, note] = result!.content.split("\n[truncated");
    expect(kept).toBe("a".repeat(256 * 1024));
    expect(note).toBe(' at 256 KB: "big.txt" is 5.0 MB; only the first 256 KB are shown]');
  });

  it("reads a normal file, and a symlink to one inside the folder, as text", async () => {
    const folder = await withReader();
    writeFileSync(join(folder, "guide.md"), "# Guide\n\nStep one.\n");
    symlinkSync("guide.md", join(folder, "latest.md"));
    expect(await read("guide.md", "latest.md")).toEqual([
      { content: "# Guide\n\nStep one.\n", error: false },
      { content: "# Guide\n\nStep one.\n", error: false },
    ]);
  });
});

describe("the size cap", () => {
  it("comes from the tool's options and never splits a UTF-8 character", async () => {
    const folder = mkdtempSync(join(tmpdir(), "switchboard-skill-"));
    try {
      writeFileSync(join(folder, "euros.txt"), "€".repeat(1000)); // 3 bytes each
      const tool = createReadSkillFileTool({ maxBytes: 1024 });
      const ctx = {
        frame: { definitionName: "reader", agentName: "skill:reader" },
        catalog: { skills: new Map([["reader", { folder }]]) } as unknown as Catalog,
      } as unknown as ToolContext;
      const output = await tool.run({ path: "euros.txt" }, ctx);
      const [kept, note] = output.content.split("\n[truncated");
      expect(output.isError).toBeUndefined();
      expect(kept).toBe("€".repeat(341)); // 1023 bytes: the 342nd character would cross 1024
      expect(note).toBe(' at 1 KB: "euros.txt" is 3 KB; only the first 1 KB are shown]');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe("the catalog loader", () => {
  it("refuses a SKILL.md or agent file that is a FIFO or a link to a device, and loads the rest", async () => {
    const { loadCatalog } = await import("../../src/catalog/loader.js");
    const root = mkdtempSync(join(tmpdir(), "switchboard-catalog-"));
    try {
      for (const dir of ["skills/fifo", "skills/zero", "skills/fine", "agents"]) execFileSync("mkdir", ["-p", join(root, dir)]);
      execFileSync("mkfifo", [join(root, "skills/fifo/SKILL.md")]);
      symlinkSync("/dev/zero", join(root, "skills/zero/SKILL.md"));
      writeFileSync(join(root, "skills/fine/SKILL.md"), "---\nname: fine\ndescription: A fine skill.\n---\nBody.\n");
      execFileSync("mkfifo", [join(root, "agents/pipe.md")]);
      const catalog = loadCatalog(join(root, "skills"), join(root, "agents"));
      expect([...catalog.skills.keys()]).toEqual(["fine"]);
      const refused = catalog.problems.filter((p) => p.includes("is not a regular file")).sort();
      expect(refused).toEqual(["agents/pipe.md", "skills/fifo/SKILL.md", "skills/zero/SKILL.md"].map((f) => expect.stringContaining(f)));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 10_000);
});
