// The admin's side: a tree of broken definitions next to good ones. Every mistake gets its exact message
// naming the file, the field and the fix; the good definitions still load.
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { available } from "../../src/catalog/definition.js";
import { loadCatalog } from "../../src/catalog/loader.js";
import { nodeArgs } from "../integration/child-process.js";

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
  "no SKILL.md in skills/no-skill-md: add one (frontmatter with name and description, then the instructions) or remove the folder",
  'skills/-leading/SKILL.md:2: name "-leading" must use only lowercase letters, digits and single hyphens, not at the start or end (e.g. "leading")',
  'skills/Research/SKILL.md:2: name "Research" must use only lowercase letters, digits and single hyphens, not at the start or end (e.g. "research")',
  "skills/bad-env/SKILL.md:4: env[0] must be an environment variable name such as GITHUB_TOKEN",
  "skills/bad-iterations/SKILL.md:4: max_iterations must be a whole number such as 25",
  "skills/bad-license/SKILL.md:4: license must be a string such as MIT or the name of a bundled license file",
  "skills/bad-metadata/SKILL.md:4: metadata must be a map of keys to text values, e.g. author: ana",
  'skills/bad-mode/SKILL.md:4: mode must be "interactive" (takes over the chat) or "batch" (runs on its own)',
  "skills/bad-schema/SKILL.md:4: output_schema must be a JSON Schema object (type: object, properties: …), or false to refuse the schema a caller passes",
  'skills/bad-tools/SKILL.md:4: allowed-tools must be a list of tool names, or one string like "use_agent read_skill_file"',
  'skills/bad-yaml/SKILL.md:3:14: frontmatter is not valid YAML: the list opened by "[" is never closed with "]"; if the value is text, put it in quotes: description: "[unclosed"',
  "skills/binary/SKILL.md: is not a text file; it must be UTF-8 Markdown with YAML frontmatter",
  'skills/double--hyphen/SKILL.md:2: name "double--hyphen" must use only lowercase letters, digits and single hyphens, not at the start or end (e.g. "double-hyphen")',
  "skills/empty-body/SKILL.md: the body is empty; write the skill's instructions below the frontmatter",
  "skills/empty-description/SKILL.md:3: description must not be empty: say what it does and when to use it",
  "skills/empty-model/SKILL.md:4: model must not be empty; remove it to inherit the caller's model",
  "skills/env-not-list/SKILL.md:4: env must be a list of environment variable names, e.g. [GITHUB_TOKEN]",
  "skills/huge/SKILL.md: the file is 301 KB; the limit is 256 KB (move long material into references/)",
  "skills/list-description/SKILL.md:3: description must be a string",
  "skills/list-frontmatter/SKILL.md:2: frontmatter must be a set of fields (name: …, description: …), not a list or a single value",
  "skills/no-description/SKILL.md: description is required: say what it does and when to use it (at most 1024 characters)",
  "skills/no-frontmatter/SKILL.md:1: missing YAML frontmatter: the file must start with a line '---', the fields, and a closing '---'",
  "skills/no-name/SKILL.md: name is required (lowercase letters, digits and hyphens, e.g. trip-planner)",
  "skills/schema-invalid/SKILL.md:4: output_schema: is not a valid JSON Schema: schema is invalid: data/properties/age/minimum must be number",
  'skills/schema-not-object/SKILL.md:4: output_schema: must describe an object (top-level "type": "object"), got "string"; tool arguments are always objects, so wrap the value in a property',
  "skills/zero-iterations/SKILL.md:4: max_iterations must be at least 1",
  'agents/bad-agent-tools.md:4: tools must be a list of tool names, or one string like "use_agent read_skill_file"',
  'agents/dupe.md: name "dupe" is already used by agents/dupe/AGENT.md; rename one of them',
];

describe("a fixtures tree of broken and good definitions", () => {
  it("reports every broken definition with its exact message and skips only those", () => {
    const catalog = loadCatalog("skills", "agents", { env: {}, knownTools: KNOWN });
    expect(EXPECTED_ERRORS.length).toBeGreaterThanOrEqual(25);
    // Cosmetic deviations (a name unlike its folder or file, or too long; a description or compatibility over the
    // limit; a number as the name) load with a warning: see "warns about …" below.
    expect(catalog.problems).toEqual(EXPECTED_ERRORS);
    expect([...catalog.skills.keys()]).toEqual([
      "a".repeat(65),
      "good-skill",
      "long-compat",
      "long-description",
      "needs-token",
      "42",
      "pdf-tools",
      "risky",
      "other-name",
    ]);
    expect([...catalog.agents.keys()]).toEqual(["dupe", "good-agent", "other-agent"]);
  });

  it("warns about unknown whitelist tools, missing variables and risky instructions without skipping", () => {
    const catalog = loadCatalog("skills", "agents", { env: {}, knownTools: KNOWN });
    expect(catalog.warnings).toEqual([
      `skills/${"a".repeat(65)}/SKILL.md:2: name is 65 characters; the limit is 64 (it loads; shorten it for hosts that enforce the limit)`,
      "skills/long-compat/SKILL.md:4: compatibility is 510 characters; the limit is 500 (it loads as it is; shorten it for hosts that enforce the limit)",
      "skills/long-description/SKILL.md:3: description is 1030 characters; the limit is 1024 (it loads as it is; shorten it for hosts that enforce the limit)",
      "skills/needs-token/SKILL.md: needs FIXTURE_SECRET_TOKEN, which is not set; it is listed as unavailable until it is",
      'skills/number-name/SKILL.md:2: name "42" differs from the folder name "number-name"; it loads as "42". Rename the folder or the name to match (the spec requires it)',
      "skills/pdf-tools/SKILL.md:9: allowed-tools: uses Read as read_skill_file (this skill's own folder only); Bash(python:*) is a Claude Code tool this gateway does not have; that one is ignored. The skill is left with only read_skill_file and complete, which are always there",
      "skills/risky/SKILL.md:5: this line pipes a download into a shell; check that this is intended before enabling it",
      'skills/wrong-folder/SKILL.md:2: name "other-name" differs from the folder name "wrong-folder"; it loads as "other-name". Rename the folder or the name to match (the spec requires it)',
      "agents/good-agent.md:4: tools: Read is a Claude Code tool this gateway does not have; that one is ignored. The agent is left with use_skill (and complete, which is always there)",
      'agents/mismatch.md:2: name "other-agent" differs from the file name "mismatch"; the agent is called "other-agent". Rename the file to match if you want them to agree',
    ]);
    expect(catalog.skills.get("needs-token")?.unavailable).toBe("needs FIXTURE_SECRET_TOKEN, which is not set");
    expect(available(catalog.skills).map((d) => d.name)).not.toContain("needs-token");
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
      // Claude Code's Bash has no equivalent here; Read is what read_skill_file already does for every skill.
      tools: [],
      mode: "interactive",
    });
  });

  it("npm run skills -- validate exits 1 with the messages, and 0 for a good folder", () => {
    const skills = nodeArgs("src/cli/skills.ts");
    let failed: { status: number; stdout: string } | null = null;
    try {
      execFileSync(process.execPath, [...skills, "validate", "skills"], { encoding: "utf8", env: { ...process.env, FIXTURE_SECRET_TOKEN: "" } });
    } catch (error) {
      failed = error as { status: number; stdout: string };
    }
    expect(failed?.status).toBe(1);
    expect(failed?.stdout).toContain("error: skills/bad-mode/SKILL.md:4: mode must be");
    expect(failed?.stdout).toContain("warning: skills/risky/SKILL.md:5: this line pipes a download into a shell");
    // Strict: the cosmetic deviations the gateway loads with a warning (name unlike its folder, too long a name,
    // description or compatibility) are errors here.
    expect(failed?.stdout).toContain('error: skills/wrong-folder/SKILL.md:2: name "other-name" must equal the folder name "wrong-folder"');
    expect(failed?.stdout).toMatch(/\n31 errors, \d+ warnings/);
    const ok = execFileSync(process.execPath, [...skills, "validate", "skills/pdf-tools"], { encoding: "utf8" });
    expect(ok).toContain("0 errors, 1 warnings");
  });
});
