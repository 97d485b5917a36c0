// read_skill_file against a skill folder that changes under it: a sub-folder swapped for a symlink out of the folder
// between the checks and the open, and the skill folder itself swapped after it loaded. The swap is made at the exact
// moment that matters by wrapping fs.realpath (the first look at the path), so each run is the worst interleaving.
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import * as fs from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Catalog } from "../../src/catalog/definition.js";
import { loadCatalog } from "../../src/catalog/loader.js";
import { createReadSkillFileTool } from "../../src/runtime/tools/read-skill-file.js";
import type { ToolContext } from "../../src/runtime/tools/tool.js";

vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  return { ...real, realpath: vi.fn(real.realpath) };
});

let root: string;
let skill: string;
let outside: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "switchboard-race-"));
  skill = join(root, "skills/reader");
  outside = join(root, "outside");
  mkdirSync(join(skill, "docs"), { recursive: true });
  mkdirSync(join(root, "agents"));
  mkdirSync(outside);
  writeFileSync(join(skill, "SKILL.md"), "---\nname: reader\ndescription: Reads its docs.\n---\nRead.\n");
  writeFileSync(join(skill, "docs/guide.md"), "the guide");
  writeFileSync(join(outside, "guide.md"), "SECRET from outside the skill folder");
});
afterEach(async () => {
  const actual = await vi.importActual<typeof fs>("node:fs/promises");
  vi.mocked(fs.realpath).mockImplementation(actual.realpath);
  rmSync(root, { recursive: true, force: true });
});

/** Right after the first realpath of a path ending in `suffix` returns, `swap` runs. */
async function swapAfterLookingAt(suffix: string, swap: () => void): Promise<void> {
  const actual = await vi.importActual<typeof fs>("node:fs/promises");
  let done = false;
  vi.mocked(fs.realpath).mockImplementation((async (path: string) => {
    const resolved = await actual.realpath(path);
    if (!done && String(path).endsWith(suffix)) {
      done = true;
      swap();
    }
    return resolved;
  }) as typeof fs.realpath);
}

/** docs/ becomes a symlink to the folder outside the skill. */
function swapDocsOut(): void {
  renameSync(join(skill, "docs"), join(skill, "docs-before"));
  symlinkSync(outside, join(skill, "docs"));
}

/** What the skill gets for read_skill_file(path), with the catalog loaded from disk as the gateway loads it. */
async function read(path: string): Promise<{ content: string; isError?: boolean }> {
  const catalog: Catalog = loadCatalog(join(root, "skills"), join(root, "agents"));
  const ctx = { frame: { definitionName: "reader", agentName: "skill:reader" }, catalog } as unknown as ToolContext;
  return createReadSkillFileTool().run({ path }, ctx);
}

describe("read_skill_file cannot be raced out of its folder", () => {
  it("refuses a file whose sub-folder became a symlink out of the skill folder after the path was checked", async () => {
    await swapAfterLookingAt("docs/guide.md", swapDocsOut);
    const out = await read("docs/guide.md");
    expect(out.content).not.toContain("SECRET");
    expect(out).toEqual({ content: '"docs/guide.md" changed while being read (a folder on its path was replaced); it was not read. Try again.', isError: true });
  });

  it("refuses to list a folder that became a symlink out of the skill folder after the path was checked", async () => {
    mkdirSync(join(skill, "docs/inner"));
    mkdirSync(join(outside, "inner"));
    writeFileSync(join(outside, "inner/secret-name.txt"), "");
    await swapAfterLookingAt("docs/inner", swapDocsOut);
    const out = await read("docs/inner");
    expect(out.content).not.toContain("secret-name");
    expect(out).toEqual({ content: '"docs/inner" changed while being read (a folder on its path was replaced); it was not read. Try again.', isError: true });
  });

  it("refuses when the skill folder itself was swapped for a symlink after it loaded", async () => {
    const catalog = loadCatalog(join(root, "skills"), join(root, "agents"));
    renameSync(skill, join(root, "reader-before"));
    mkdirSync(join(outside, "docs"));
    writeFileSync(join(outside, "docs/guide.md"), "SECRET from outside the skill folder");
    symlinkSync(outside, skill);
    const ctx = { frame: { definitionName: "reader", agentName: "skill:reader" }, catalog } as unknown as ToolContext;
    const out = await createReadSkillFileTool().run({ path: "docs/guide.md" }, ctx);
    expect(out).toEqual({
      content: "the skill folder now leads somewhere else than when it was loaded (" + catalog.skills.get("reader")!.source + "); nothing was read",
      isError: true,
    });
  });

  it("still reads a file and lists a folder when nothing moves", async () => {
    expect(await read("docs/guide.md")).toEqual({ content: "the guide" });
    mkdirSync(join(skill, "docs/inner"));
    expect(await read("docs")).toEqual({ content: "guide.md\ninner/" });
  });
});
