import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadCatalog } from "../../src/catalog/loader.js";
import { writeDefinitions } from "../helpers/harness.js";

let root = "";
afterEach(() => rmSync(root, { recursive: true, force: true }));

function load(files: Record<string, string>) {
  const defs = writeDefinitions(files);
  root = defs.root;
  const catalog = loadCatalog(defs.skills, defs.agents);
  // Messages name files relative to the working directory; strip the temp root for readable assertions.
  return { ...catalog, problems: catalog.problems.map((p) => p.replace(/^.*?(skills|agents)\//, "$1/")) };
}

describe("loadCatalog", () => {
  it("loads skills and agents with their frontmatter and body", () => {
    const catalog = load({
      "skills/interview/SKILL.md":
        "---\nname: interview\ndescription: Asks questions.\nmax_iterations: 7\nmode: batch\nallowed-tools: use_agent\n---\n# Interview\nAsk.\n",
      "agents/researcher.md": "---\nname: researcher\ndescription: Researches.\nmodel: haiku\ntools: Read, use_skill\n---\nResearch.\n",
      "agents/nested/AGENT.md": "---\nname: nested\ndescription: In a folder.\n---\nBody.\n",
    });
    expect(catalog.problems).toEqual([]);
    expect(catalog.skills.get("interview")).toMatchObject({
      kind: "skill",
      description: "Asks questions.",
      body: "# Interview\nAsk.",
      maxIterations: 7,
      mode: "batch",
      tools: ["use_agent"],
    });
    expect(catalog.agents.get("researcher")).toMatchObject({ model: "haiku", tools: ["use_skill"], mode: "interactive" }); // Claude Code's Read has no equivalent
    expect([...catalog.agents.keys()]).toEqual(["nested", "researcher"]);
  });

  it("a name that differs from its folder loads under the frontmatter name, with a warning", () => {
    const catalog = load({ "skills/alpha/SKILL.md": "---\nname: beta\ndescription: x\n---\nBody\n" });
    expect([...catalog.skills.keys()]).toEqual(["beta"]);
    expect(catalog.problems).toEqual([]);
    expect(catalog.warnings[0]).toContain('name "beta" differs from the folder name "alpha"; it loads as "beta"');
  });

  it("missing folders are an empty catalog, not an error", () => {
    expect(loadCatalog(join("/nonexistent", "skills"), join("/nonexistent", "agents"))).toEqual({
      skills: new Map(),
      agents: new Map(),
      problems: [],
      warnings: [],
    });
    root = "";
  });
});

describe("the shipped examples", () => {
  it("load cleanly: no problems, no warnings", () => {
    const repo = new URL("../../", import.meta.url).pathname;
    const catalog = loadCatalog(join(repo, "skills"), join(repo, "agents"), { knownTools: ["use_skill", "use_agent", "complete", "read_skill_file"] });
    expect(catalog.problems).toEqual([]);
    expect(catalog.warnings).toEqual([]);
    expect([...catalog.skills.keys(), ...catalog.agents.keys()]).toEqual(["interview", "contact-extractor", "researcher"]);
    root = "";
  });
});
