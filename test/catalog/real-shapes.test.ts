// Files shaped like the public ones admins drop in (OpenClaw's bundled skills, Anthropic's skills, Claude Code
// subagents), written from the documented formats: each fixture names the example it follows. All of them load;
// where they deviate from the spec, the gateway says so once per file, and `validate` is stricter.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { available } from "../../src/catalog/definition.js";
import { loadCatalog } from "../../src/catalog/loader.js";
import { validatePath } from "../../src/catalog/validate.js";

const CORPUS = new URL("../fixtures/catalog/real-shapes/", import.meta.url).pathname;
const KNOWN = ["use_skill", "use_agent", "call_agent", "complete", "report_back", "read_skill_file", "http_request"];
const cwd = process.cwd();
beforeAll(() => process.chdir(CORPUS));
afterAll(() => process.chdir(cwd));

describe("definitions shaped like the public ones", () => {
  it("all load; each deviation is one warning naming the file, the line and the fix", () => {
    const catalog = loadCatalog("skills", "agents", { env: {}, knownTools: KNOWN });
    expect(catalog.problems).toEqual([]);
    expect([...catalog.skills.keys()]).toEqual(["api-reference", "release-notes", "todoist-tasks", "word-documents"]);
    expect([...catalog.agents.keys()]).toEqual(["code-reviewer", "web-researcher"]);
    expect(catalog.warnings).toEqual([
      "skills/api-reference/SKILL.md:6: description is 1074 characters; the limit is 1024 (it loads as it is; shorten it for hosts that enforce the limit)",
      "skills/api-reference/SKILL.md:11: allowed-tools: uses Read as read_skill_file (this skill's own folder only) and WebFetch as http_request; Bash(jq:*) is a Claude Code tool this gateway does not have; that one is ignored. The skill is left with http_request (and read_skill_file and complete, which are always there)",
      "skills/todoist-tasks/SKILL.md: needs TODOIST_API_KEY, which is not set; it is listed as unavailable until it is",
      `skills/word-documents/SKILL.md:5: description: the value has ": " in it, which YAML reads as the start of another field; it was read as text. Put it in quotes to make this warning go away: description: "Create, read and edit Word documents. Triggers on: 'Word doc', '.docx', or a request for a report with headings"`,
      'agents/review.md:4: name "code-reviewer" differs from the file name "review"; the agent is called "code-reviewer". Rename the file to match if you want them to agree',
      "agents/review.md:6: tools: Read, Grep and Bash(git log:*) are Claude Code tools this gateway does not have; those are ignored. The agent is left with only complete, which is always there",
      "agents/web-researcher.md:6: tools: uses WebFetch as http_request; WebSearch is a Claude Code tool this gateway does not have; that one is ignored. The agent is left with http_request (and complete, which is always there)",
    ]);
  });

  it("keeps what the files say: nested OpenClaw metadata, its requires.env as a gate, values as written", () => {
    const catalog = loadCatalog("skills", "agents", { env: {}, knownTools: KNOWN });
    const todoist = catalog.skills.get("todoist-tasks")!;
    expect(todoist.metadata).toEqual({
      openclaw: { emoji: "✅", requires: { env: ["TODOIST_API_KEY"], bins: ["curl"] }, primaryEnv: "TODOIST_API_KEY" },
    });
    expect(todoist).toMatchObject({
      env: ["TODOIST_API_KEY"],
      unavailable: "needs TODOIST_API_KEY, which is not set",
      extra: { homepage: "https://developer.todoist.com/rest/v2/" },
    });
    expect(available(catalog.skills).map((d) => d.name)).not.toContain("todoist-tasks");
    expect(loadCatalog("skills", "agents", { env: { TODOIST_API_KEY: "k" } }).skills.get("todoist-tasks")!.unavailable).toBeNull();

    expect(catalog.skills.get("release-notes")).toMatchObject({ extra: { version: "1.0" }, metadata: { author: "docs-team", version: "1.0" } });
    expect(catalog.skills.get("word-documents")!.description).toBe(
      "Create, read and edit Word documents. Triggers on: 'Word doc', '.docx', or a request for a report with headings",
    );
    expect(catalog.skills.get("api-reference")).toMatchObject({ license: "Complete terms in LICENSE.txt", tools: ["http_request"] });
    expect(catalog.skills.get("api-reference")!.description).toHaveLength(1074);
    expect(catalog.agents.get("code-reviewer")).toMatchObject({ source: "agents/review.md", model: "inherit", tools: [] });
    expect(catalog.agents.get("web-researcher")).toMatchObject({ model: "haiku", tools: ["http_request"], extra: { color: "blue" } });
  });

  it("validate refuses the spec violations the gateway loads, and warns about what other hosts would not understand", () => {
    const found = [...validatePath("skills", { env: {}, knownTools: KNOWN }), ...validatePath("agents", { env: {}, knownTools: KNOWN })].map(
      (p) => `${p.severity}: ${p.message}`,
    );
    // The beginning of each line: the full texts of the loader's warnings are asserted above.
    const expected = [
      "error: skills/api-reference/SKILL.md:6: description is 1074 characters; the limit is 1024",
      "warning: skills/api-reference/SKILL.md:11: allowed-tools: uses Read as read_skill_file",
      'warning: skills/release-notes/SKILL.md:6: version is not an Agent Skills field; Switchboard ignores it, other hosts may refuse the skill (skills-ref does). Put values for other hosts under metadata, e.g. metadata: { version: "1.0" }',
      "warning: skills/todoist-tasks/SKILL.md:7: homepage is not an Agent Skills field",
      'warning: skills/todoist-tasks/SKILL.md:8: metadata "openclaw" holds nested values; the spec\'s metadata maps keys to text, so other hosts may refuse them or turn them into text (skills-ref does). Switchboard keeps them as written and reads metadata.openclaw.requires.env as env',
      "warning: skills/todoist-tasks/SKILL.md: needs TODOIST_API_KEY, which is not set",
      'warning: skills/word-documents/SKILL.md:5: description: the value has ": " in it',
      'warning: agents/review.md:4: name "code-reviewer" differs from the file name "review"',
      "warning: agents/review.md:6: tools: Read, Grep and Bash(git log:*) are Claude Code tools",
      "warning: agents/web-researcher.md:6: tools: uses WebFetch as http_request",
    ];
    expect(found.map((line, i) => line.slice(0, expected[i]?.length))).toEqual(expected);
  });
});
