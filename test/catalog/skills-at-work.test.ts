// Skills and agents from folders, at work in a running bot: progressive disclosure through
// read_skill_file, whitelists, unavailable definitions, and hot reload with real files.
import { cpSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Catalog } from "../../src/catalog/definition.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, systemText, text, toolUse } from "../fakes/anthropic/server.js";
import { deferred } from "../helpers/deferred.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";
import { resultTexts } from "../helpers/requests.js";

const FIXTURES = new URL("../fixtures/catalog/", import.meta.url).pathname;
let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

describe("an Agent Skills folder written in the spec's format", () => {
  it("runs as a child that reads its own reference files on demand, confined to its folder", async () => {
    h = await startHarness();
    cpSync(join(FIXTURES, "skills/pdf-tools"), join(h.root, "skills/pdf-tools"), { recursive: true });
    writeFileSync(join(h.root, "outside.txt"), "secret");
    symlinkSync(join(h.root, "outside.txt"), join(h.root, "skills/pdf-tools/escape.txt"));
    h.catalog.reload();

    h.fake.script(
      (req) => {
        // Progressive disclosure: main sees name and description only.
        expect(systemText(req)).toContain("- pdf-tools: Extract text and tables from PDF files");
        expect(systemText(req)).not.toContain("# PDF tools");
        return reply(toolUse("use_skill", { name: "pdf-tools", message: "get page 1 of report.pdf" }));
      },
      (req) => {
        expect(systemText(req)).toContain("# PDF tools");
        expect(systemText(req)).toContain("read_skill_file");
        expect(req.tools!.map((t) => t.name)).toEqual(["read_skill_file", "complete"]);
        return reply(
          toolUse("read_skill_file", { path: "references/REFERENCE.md" }),
          toolUse("read_skill_file", { path: "." }),
          toolUse("read_skill_file", { path: "../../outside.txt" }),
          toolUse("read_skill_file", { path: "/etc/passwd" }),
          toolUse("read_skill_file", { path: "escape.txt" }),
        );
      },
      (req) => {
        expect(resultTexts(req)).toEqual([
          { content: "# pypdf reference\n\nUse PdfReader(path).pages[i].extract_text() to read page i.\n", error: false },
          { content: "SKILL.md\nescape.txt\nreferences/\nscripts/", error: false },
          { content: '"../../outside.txt" is outside the skill folder; use a path relative to it without ".."', error: true },
          { content: '"/etc/passwd" is outside the skill folder; use a path relative to it without ".."', error: true },
          { content: '"escape.txt" leads outside the skill folder (a symlink); it cannot be read', error: true },
        ]);
        return reply(toolUse("complete", { result: "Use PdfReader(...).pages[0].extract_text()" }));
      },
      text("Here is how to read page 1."),
    );
    expect(await h.say("read my pdf")).toEqual(["main: Here is how to read page 1."]);
    expect(h.fake.rejected()).toEqual([]);
  });
});

describe("whitelists", () => {
  it("a tool outside the whitelist is neither offered nor run when the model names it anyway", async () => {
    let runs = 0;
    const lookup: Tool = {
      spec: { name: "lookup", description: "Looks up.", input_schema: { type: "object" } },
      idempotent: true,
      run: async () => {
        runs++;
        return { content: "found" };
      },
    };
    h = await startHarness({ files: skillFile("narrow", "Only complete.", "allowed-tools: complete\n"), tools: [lookup] });
    h.fake.script(
      (req) => {
        expect(req.tools!.map((t) => t.name)).toEqual(["use_skill", "lookup"]);
        return reply(toolUse("use_skill", { name: "narrow", message: "go" }));
      },
      (req) => {
        expect(req.tools!.map((t) => t.name)).toEqual(["read_skill_file", "complete"]);
        return { ...reply(toolUse("lookup", {})), allowUnoffered: true };
      },
      (req) => {
        expect(resultTexts(req)).toEqual([{ content: 'tool "lookup" is not available to skill:narrow; available: read_skill_file, complete', error: true }]);
        return reply(toolUse("complete", { result: "done without lookup" }));
      },
      text("ok"),
    );
    await h.send("go");
    expect(runs).toBe(0);
    expect(h.fake.pending()).toBe(0);
  });
});

describe("unavailable definitions", () => {
  it("a skill whose env variable is missing is not offered and refuses with the reason", async () => {
    h = await startHarness({ files: { ...skillFile("gh", "Use GitHub.", "env: [GH_TOKEN]\n"), ...skillFile("notes", "Notes.") } });
    h.fake.script(
      (req) => {
        expect(systemText(req)).not.toContain("- gh:");
        expect(systemText(req)).toContain("- notes:");
        return { ...reply(toolUse("use_skill", { name: "gh", message: "x" })), allowUnoffered: true };
      },
      (req) => {
        expect(resultTexts(req)).toEqual([{ content: 'the skill "gh" is unavailable: it needs GH_TOKEN, which is not set; available: notes', error: true }]);
        return text("GitHub is not set up here.");
      },
    );
    await h.send("check my PRs");
    expect(await h.say("/skills")).toEqual(["switchboard: Skills:\n• notes: The notes skill for tests."]);
  });
});

describe("hot reload", () => {
  function reloaded(harness: Harness): Promise<Catalog> {
    const next = deferred<Catalog>();
    harness.catalog.onReload((c) => next.resolve(c));
    return next.promise;
  }

  it("applies added, edited, removed and renamed folders to new invocations; a running frame keeps its version", async () => {
    h = await startHarness({ files: skillFile("planner", "PLANNER V1") });
    await h.catalog.watch();
    const skills = join(h.root, "skills");

    h.fake.script(reply(toolUse("use_skill", { name: "planner", message: "plan" })), text("v1 asks: where?"));
    await h.send("plan");

    // Edit while the v1 frame waits for the user.
    let change = reloaded(h);
    writeFileSync(join(skills, "planner/SKILL.md"), "---\nname: planner\ndescription: Plans v2.\n---\nPLANNER V2\n");
    await change;
    h.fake.script((req) => {
      expect(systemText(req)).toContain("PLANNER V1");
      return reply(toolUse("complete", { result: "Lisbon" }));
    }, text("done"));
    await h.send("Lisbon");

    h.fake.script(
      (req) => {
        expect(systemText(req)).toContain("- planner: Plans v2.");
        return reply(toolUse("use_skill", { name: "planner", message: "again" }));
      },
      (req) => {
        expect(systemText(req)).toContain("PLANNER V2");
        return reply(toolUse("complete", { result: "ok" }));
      },
      text("done again"),
    );
    await h.send("plan again");

    // Add one.
    change = reloaded(h);
    mkdirSync(join(skills, "packing"));
    writeFileSync(join(skills, "packing/SKILL.md"), "---\nname: packing\ndescription: Packing lists.\n---\nPack.\n");
    expect([...(await change).skills.keys()]).toEqual(["packing", "planner"]);

    // Rename one (folder and name).
    change = reloaded(h);
    renameSync(join(skills, "packing"), join(skills, "luggage"));
    writeFileSync(join(skills, "luggage/SKILL.md"), "---\nname: luggage\ndescription: Luggage lists.\n---\nPack.\n");
    let current = await change;
    while (!current.skills.has("luggage") || current.skills.has("packing")) current = await reloaded(h);
    expect([...current.skills.keys()]).toEqual(["luggage", "planner"]);

    // Remove one.
    change = reloaded(h);
    rmSync(join(skills, "planner"), { recursive: true });
    current = await change;
    while (current.skills.has("planner")) current = await reloaded(h);
    h.fake.script({ ...reply(toolUse("use_skill", { name: "planner", message: "x" })), allowUnoffered: true }, (req) => {
      expect(resultTexts(req)[0]!.content).toBe('there is no skill named "planner"; available: luggage');
      return text("planner is gone");
    });
    expect(await h.say("plan once more")).toEqual(["main: planner is gone"]);
  });
});

describe("hot reload under a dotted folder", () => {
  it("watches SKILLS_DIR inside a hidden folder (~/.switchboard/skills), and still ignores dot entries directly in it", async () => {
    const { LiveCatalog } = await import("../../src/catalog/live.js");
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { silentLogger } = await import("../../src/log.js");
    const root = join(mkdtempSync(join(tmpdir(), "switchboard-dotted-")), ".switchboard");
    mkdirSync(join(root, "skills/planner"), { recursive: true });
    mkdirSync(join(root, "agents"), { recursive: true });
    writeFileSync(join(root, "skills/planner/SKILL.md"), "---\nname: planner\ndescription: Plans v1.\n---\nV1\n");
    const live = new LiveCatalog(join(root, "skills"), join(root, "agents"), { log: silentLogger(), debounceMs: 10 });
    try {
      await live.watch();
      const next = deferred<Catalog>();
      live.onReload((c) => next.resolve(c));
      writeFileSync(join(root, "skills/.notes.swp"), "editor scratch");
      writeFileSync(join(root, "skills/planner/SKILL.md"), "---\nname: planner\ndescription: Plans v2.\n---\nV2\n");
      expect((await next.promise).skills.get("planner")?.description).toBe("Plans v2.");
    } finally {
      await live.close();
      rmSync(join(root, ".."), { recursive: true, force: true });
    }
  });
});
