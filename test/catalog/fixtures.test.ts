// The admin's side: a tree of broken definitions next to good ones. Every mistake gets its exact message
// naming the file, the field and the fix; the good definitions still load.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { available } from "../../src/catalog/definition.js";
import { loadCatalog } from "../../src/catalog/loader.js";

const FIXTURES = new URL("../fixtures/catalog/", import.meta.url).pathname;
const KNOWN = ["use_skill", "use_agent", "complete", "read_skill_file"];
let root = "";
const cwd = process.cwd();

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "switchboard-fixtures-"));
  cpSync(FIXTURES, root, { recursive: true });
  // Too big and binary files are made here rather than committed.
  mkdirSync(join(root, "skills/huge"));
  writeFileSync(join(root, "skills/huge/SKILL.md"), `---\nname: huge\ndescription: x\n---\n${"y".repeat(300 * 1024)}`);
  mkdirSync(join(root, "skills/binary"));
  writeFileSync(join(root, "skills/binary/SKILL.md"), Buffer.from([0x2d, 0x2d, 0x2d, 0x0a, 0x00, 0xff, 0xfe]));
  process.chdir(root);
});
afterAll(() => {
  process.chdir(cwd);
  rmSync(root, { recursive: true, force: true });
});

const EXPECTED_ERRORS = [
  "skills/no-skill-md: no SKILL.md in the folder; add one or remove the folder",
  'skills/-leading/SKILL.md: name "-leading" must use only lowercase letters, digits and single hyphens, not at the start or end (e.g. "leading"), and equal the folder name',
  'skills/Research/SKILL.md: name "Research" must use only lowercase letters, digits and single hyphens, not at the start or end (e.g. "research"), and equal the folder name',
  `skills/${"a".repeat(65)}/SKILL.md: name is 65 characters; the limit is 64`,
  "skills/bad-env/SKILL.md: env[0] must be an environment variable name such as GITHUB_TOKEN",
  "skills/bad-iterations/SKILL.md: max_iterations must be a whole number such as 25",
  "skills/bad-license/SKILL.md: license must be a string such as MIT or the name of a bundled license file",
  "skills/bad-metadata/SKILL.md: metadata must be a map of keys to text values, e.g. author: ana",
  'skills/bad-mode/SKILL.md: mode must be "interactive" (takes over the chat) or "batch" (runs on its own)',
  "skills/bad-schema/SKILL.md: output_schema must be a JSON Schema object (type: object, properties: …)",
  'skills/bad-tools/SKILL.md: allowed-tools must be a list of tool names, or one string like "use_agent read_skill_file"',
  "skills/bad-yaml/SKILL.md: frontmatter is not valid YAML: Flow sequence in block collection must be sufficiently indented and end with a ] at line 2, column 23",
  "skills/binary/SKILL.md: is not a text file; it must be UTF-8 Markdown with YAML frontmatter",
  'skills/double--hyphen/SKILL.md: name "double--hyphen" must use only lowercase letters, digits and single hyphens, not at the start or end (e.g. "double-hyphen"), and equal the folder name',
  "skills/empty-body/SKILL.md: the body is empty; write the skill's instructions below the frontmatter",
  "skills/empty-description/SKILL.md: description must not be empty: say what it does and when to use it",
  "skills/empty-model/SKILL.md: model must not be empty; remove it to inherit the caller's model",
  "skills/env-not-list/SKILL.md: env must be a list of environment variable names, e.g. [GITHUB_TOKEN]",
  "skills/huge/SKILL.md: the file is 301 KB; the limit is 256 KB (move long material into references/)",
  "skills/list-description/SKILL.md: description must be a string",
  "skills/list-frontmatter/SKILL.md: frontmatter must be a set of fields (name: …, description: …), not a list or a single value",
  "skills/long-compat/SKILL.md: compatibility is 510 characters; the limit is 500",
  "skills/long-description/SKILL.md: description is 1030 characters; the limit is 1024",
  "skills/no-description/SKILL.md: description is required: say what it does and when to use it (at most 1024 characters)",
  "skills/no-frontmatter/SKILL.md: missing YAML frontmatter: the file must start with a line '---', the fields, and a closing '---'",
  "skills/no-name/SKILL.md: name is required (lowercase letters, digits and hyphens, e.g. trip-planner)",
  "skills/number-name/SKILL.md: name must be a string",
  "skills/schema-invalid/SKILL.md: output_schema: is not a valid JSON Schema: schema is invalid: data/properties/age/minimum must be number",
  'skills/schema-not-object/SKILL.md: output_schema: must describe an object (top-level "type": "object"), got "string"; tool arguments are always objects, so wrap the value in a property',
  'skills/wrong-folder/SKILL.md: name "other-name" must equal the folder name "wrong-folder"; rename one to match the other',
  "skills/zero-iterations/SKILL.md: max_iterations must be at least 1",
  'agents/bad-agent-tools.md: tools must be a list of tool names, or one string like "use_agent read_skill_file"',
  'agents/dupe.md: name "dupe" is already used by agents/dupe/AGENT.md; rename one of them',
  'agents/mismatch.md: name "other-agent" must equal the file name "mismatch"; rename one to match the other',
];

describe("a fixtures tree of broken and good definitions", () => {
  it("reports every broken definition with its exact message and skips only those", () => {
    const catalog = loadCatalog("skills", "agents", { env: {}, knownTools: KNOWN });
    expect(EXPECTED_ERRORS.length).toBeGreaterThanOrEqual(25);
    expect(catalog.problems).toEqual(EXPECTED_ERRORS);
    expect([...catalog.skills.keys()]).toEqual(["good-skill", "needs-token", "pdf-tools", "risky"]);
    expect([...catalog.agents.keys()]).toEqual(["dupe", "good-agent"]);
  });

  it("warns about unknown whitelist tools, missing variables and risky instructions without skipping", () => {
    const catalog = loadCatalog("skills", "agents", { env: {}, knownTools: KNOWN });
    expect(catalog.warnings).toEqual([
      "skills/needs-token/SKILL.md: needs FIXTURE_SECRET_TOKEN, which is not set; it is listed as unavailable until it is",
      "skills/pdf-tools/SKILL.md: allowed-tools names tools this bot does not have (Bash(python:*), Read); they are ignored. Known: use_skill, use_agent, complete, read_skill_file",
      "skills/risky/SKILL.md: line 1 pipes a download into a shell; check that this is intended before enabling it",
      "agents/good-agent.md: tools names tools this bot does not have (Read); they are ignored. Known: use_skill, use_agent, complete, read_skill_file",
    ]);
    expect(catalog.skills.get("needs-token")?.unavailable).toBe("needs FIXTURE_SECRET_TOKEN, which is not set");
    expect(available(catalog.skills).map((d) => d.name)).toEqual(["good-skill", "pdf-tools", "risky"]);
    // With the variable set, the skill is available.
    const withToken = loadCatalog("skills", "agents", { env: { FIXTURE_SECRET_TOKEN: "x" }, knownTools: KNOWN });
    expect(withToken.skills.get("needs-token")?.unavailable).toBeNull();
  });

  it("loads the Agent Skills fields of a folder written for another host without edits", () => {
    const pdf = loadCatalog("skills", "agents", { env: {} }).skills.get("pdf-tools")!;
    expect(pdf).toMatchObject({
      license: "Apache-2.0",
      compatibility: "Needs a Python 3 runtime with pypdf installed.",
      metadata: { author: "example-org", version: "1.2" },
      tools: ["Bash(python:*)", "Read"],
      mode: "interactive",
    });
  });

  it("npm run skills -- validate exits 1 with the messages, and 0 for a good folder", () => {
    const tsx = join(cwd, "node_modules/.bin/tsx");
    const script = join(cwd, "src/cli/skills.ts");
    let failed: { status: number; stdout: string } | null = null;
    try {
      execFileSync(tsx, [script, "validate", "skills"], { encoding: "utf8", env: { ...process.env, FIXTURE_SECRET_TOKEN: "" } });
    } catch (error) {
      failed = error as { status: number; stdout: string };
    }
    expect(failed?.status).toBe(1);
    expect(failed?.stdout).toContain("error: skills/bad-mode/SKILL.md: mode must be");
    expect(failed?.stdout).toContain("warning: skills/risky/SKILL.md: line 1 pipes a download into a shell");
    expect(failed?.stdout).toMatch(/31 errors, \d+ warnings/);
    const ok = execFileSync(tsx, [script, "validate", "skills/pdf-tools"], { encoding: "utf8" });
    expect(ok).toContain("0 errors, 1 warnings");
  });
});
