// Skills and agents written for other hosts (Agent Skills clients, Claude Code, OpenClaw) load: the gateway warns
// about cosmetic deviations and loads, as the spec's client guide asks; `validate` stays strict for an admin's CI.
// One test per rule, through the real loader, the live catalog, the running gateway or the CLI.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { LiveCatalog } from "../../src/catalog/live.js";
import { runSkills } from "../../src/cli/skills-command.js";
import { loadConfig } from "../../src/config.js";
import { loadCatalog } from "../../src/catalog/loader.js";
import { reply, text, toolUse } from "../fakes/anthropic/server.js";
import { startHarness, writeDefinitions, type Harness } from "../helpers/harness.js";

const KNOWN = ["use_skill", "use_agent", "call_agent", "complete", "report_back", "read_skill_file", "http_request"];
let root = "";
let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
  if (root) rmSync(root, { recursive: true, force: true });
  root = "";
});

/** Loads `files` (paths like "skills/x/SKILL.md"); messages are shown relative to the temp folder. */
function load(files: Record<string, string>, env: Record<string, string> = {}) {
  const defs = writeDefinitions(files);
  root = defs.root;
  const catalog = loadCatalog(defs.skills, defs.agents, { env, knownTools: KNOWN });
  const strip = (m: string) => m.split(`${root}/`).join("");
  return { ...catalog, problems: catalog.problems.map(strip), warnings: catalog.warnings.map(strip) };
}

/**
 * `npm run skills -- validate <path>` in the temp folder, run in this process with this process's environment (as the
 * child process it replaced had); paths are shown relative to the folder, as the CLI run there shows them.
 * test/catalog/fixtures.test.ts starts the real entry point.
 */
async function validate(files: Record<string, string>, target: string, env: Record<string, string> = { HTTP_REQUEST_TOOL: "on", WORKSPACE: "off" }) {
  const defs = writeDefinitions(files);
  root = defs.root;
  const config = loadConfig({ ...process.env, ...env });
  let out = "";
  let err = "";
  const status = await runSkills("validate", join(root, target), config, { write: (t: string) => (out += t) }, { write: (t: string) => (err += t) });
  const strip = (m: string) => m.split(`${root}/`).join("");
  return { status, out: strip(out), err: strip(err) };
}

const skill = (name: string, fields: string, body = "Do the task.") => `---\nname: ${name}\n${fields}---\n${body}\n`;

describe("1. agents are named by their frontmatter", () => {
  it("a name unlike the file name loads under that name with a warning; one name in two files is an error naming both", () => {
    const catalog = load({
      "agents/review.md": skill("code-reviewer", "description: Reviews code.\n"),
      "agents/first.md": skill("helper", "description: One.\n"),
      "agents/second.md": skill("helper", "description: Two.\n"),
    });
    expect([...catalog.agents.keys()]).toEqual(["helper", "code-reviewer"]);
    expect(catalog.agents.get("code-reviewer")!.source).toMatch(/agents\/review\.md$/);
    expect(catalog.warnings).toContain(
      'agents/review.md:2: name "code-reviewer" differs from the file name "review"; the agent is called "code-reviewer". Rename the file to match if you want them to agree',
    );
    expect(catalog.problems).toEqual(['agents/second.md: name "helper" is already used by agents/first.md; rename one of them']);
  });
});

describe("1b. agents named after versions", () => {
  it("a name with a dot (powershell-5.1-expert) loads with a warning; other characters stay errors", () => {
    const catalog = load({
      "agents/powershell-5.1-expert.md": skill("powershell-5.1-expert", "description: PowerShell 5.1.\n"),
      "agents/bad.md": skill("Bad_Name", "description: No.\n"),
    });
    expect([...catalog.agents.keys()]).toEqual(["powershell-5.1-expert"]);
    expect(catalog.warnings).toContain(
      'agents/powershell-5.1-expert.md:2: name "powershell-5.1-expert" has a "." (the spec allows only letters, digits and hyphens); it loads as "powershell-5.1-expert". Use "powershell-5-1-expert" for other hosts',
    );
    expect(catalog.problems.some((p) => p.includes('name "Bad_Name" must use only lowercase letters'))).toBe(true);
  });
});

describe("2. skills: a name unlike the folder, a long name or description warn and load", () => {
  it("loads under the frontmatter name with one warning each; validate refuses the same folder", async () => {
    const long = "x".repeat(1100);
    const files = {
      "skills/alpha/SKILL.md": skill("beta", "description: Folder and name differ.\n"),
      [`skills/${"n".repeat(70)}/SKILL.md`]: skill("n".repeat(70), "description: A long name.\n"),
      "skills/wordy/SKILL.md": skill("wordy", `description: ${long}\n`),
    };
    const catalog = load(files);
    expect(catalog.problems).toEqual([]);
    expect([...catalog.skills.keys()]).toEqual(["beta", "n".repeat(70), "wordy"]);
    expect(catalog.warnings).toEqual([
      'skills/alpha/SKILL.md:2: name "beta" differs from the folder name "alpha"; it loads as "beta". Rename the folder or the name to match (the spec requires it)',
      `skills/${"n".repeat(70)}/SKILL.md:2: name is 70 characters; the limit is 64 (it loads; shorten it for hosts that enforce the limit)`,
      "skills/wordy/SKILL.md:3: description is 1100 characters; the limit is 1024 (it loads as it is; shorten it for hosts that enforce the limit)",
    ]);
    const strict = await validate(files, "skills");
    expect(strict.status).toBe(1);
    expect(strict.out).toContain('error: skills/alpha/SKILL.md:2: name "beta" must equal the folder name "alpha"; rename one to match the other\n');
    expect(strict.out).toContain(`error: skills/${"n".repeat(70)}/SKILL.md:2: name is 70 characters; the limit is 64\n`);
    expect(strict.out).toContain("error: skills/wordy/SKILL.md:3: description is 1100 characters; the limit is 1024\n");
  });
});

describe("3. nested metadata", () => {
  it("loads with its values kept, and OpenClaw's metadata.openclaw.requires.env gates the skill like env:", () => {
    const files = {
      "skills/gh/SKILL.md": skill("gh", 'description: GitHub.\nmetadata: {"openclaw": {"emoji": "🐙", "requires": {"env": ["GH_TOKEN"], "bins": ["gh"]}}}\n'),
      "skills/legacy/SKILL.md": skill("legacy", "description: Older alias.\nmetadata:\n  clawdbot:\n    requires:\n      env: [LEGACY_KEY]\n"),
    };
    const catalog = load(files);
    expect(catalog.problems).toEqual([]);
    expect(catalog.skills.get("gh")).toMatchObject({
      metadata: { openclaw: { emoji: "🐙", requires: { env: ["GH_TOKEN"], bins: ["gh"] } } },
      env: ["GH_TOKEN"],
      unavailable: "needs GH_TOKEN, which is not set",
    });
    expect(catalog.skills.get("legacy")!.unavailable).toBe("needs LEGACY_KEY, which is not set");
    rmSync(root, { recursive: true, force: true });
    expect(load(files, { GH_TOKEN: "t", LEGACY_KEY: "k" }).skills.get("gh")!.unavailable).toBeNull();
  });
});

describe('4. an unquoted ": " inside a value', () => {
  it("is read as text with a warning naming the line and the quoted value to write", () => {
    const catalog = load({
      "skills/docs/SKILL.md": skill("docs", "description: Writes docs. Triggers on: 'x'\nlicense: MIT\n"),
      "skills/wrapped/SKILL.md": skill("wrapped", "description: Use when: the user asks\n  for a summary # a comment\ncompatibility: Needs: git\n"),
    });
    expect(catalog.problems).toEqual([]);
    expect(catalog.skills.get("docs")).toMatchObject({ description: "Writes docs. Triggers on: 'x'", license: "MIT" });
    expect(catalog.skills.get("wrapped")).toMatchObject({ description: "Use when: the user asks for a summary", compatibility: "Needs: git" });
    expect(catalog.warnings).toEqual([
      `skills/docs/SKILL.md:3: description: the value has ": " in it, which YAML reads as the start of another field; it was read as text. Put it in quotes to make this warning go away: description: "Writes docs. Triggers on: 'x'"`,
      'skills/wrapped/SKILL.md:3: description: the value has ": " in it, which YAML reads as the start of another field; it was read as text. Put it in quotes to make this warning go away: description: "Use when: the user asks for a summary"',
      'skills/wrapped/SKILL.md:5: compatibility: the value has ": " in it, which YAML reads as the start of another field; it was read as text. Put it in quotes to make this warning go away: compatibility: "Needs: git"',
    ]);
  });
});

describe("5. values keep what the author wrote", () => {
  it('version: 1.0 stays "1.0" and name: 123 is the text "123"', () => {
    const catalog = load({
      "skills/notes/SKILL.md": skill("notes", "description: Notes.\nversion: 1.0\nmetadata:\n  version: 1.0\n  beta: true\n"),
      "skills/123/SKILL.md": "---\nname: 123\ndescription: A numeric name.\n---\nBody\n",
    });
    expect(catalog.problems).toEqual([]);
    expect(catalog.skills.get("notes")).toMatchObject({ extra: { version: "1.0" }, metadata: { version: "1.0", beta: "true" } });
    expect(catalog.skills.get("123")!.name).toBe("123");
  });
});

describe("6. tool lists in Claude Code's forms", () => {
  it("splits on commas and spaces but not inside parentheses, maps what this gateway can honour, and warns once", () => {
    const catalog = load({
      "agents/fetcher.md": skill("fetcher", "description: Fetches.\ntools: Bash(git log:*) Read, WebFetch, Agent\n"),
      "skills/listed/SKILL.md": skill("listed", 'description: A YAML list.\nallowed-tools: ["Bash(npm run test:*)", WebFetch(domain:example.com), use_agent]\n'),
    });
    expect(catalog.agents.get("fetcher")!.tools).toEqual(["http_request", "call_agent"]);
    expect(catalog.skills.get("listed")!.tools).toEqual(["use_agent"]);
    expect(catalog.warnings).toEqual([
      "skills/listed/SKILL.md:4: allowed-tools: Bash(npm run test:*) is a Claude Code tool this gateway does not have; WebFetch(domain:example.com) is limited by a rule in parentheses that this gateway cannot enforce; those are ignored. The skill is left with use_agent (and read_skill_file and complete, which are always there)",
      "agents/fetcher.md:4: tools: uses WebFetch as http_request and Agent as call_agent; Bash(git log:*) and Read are Claude Code tools this gateway does not have; those are ignored. The agent is left with http_request and call_agent (and complete, which is always there)",
    ]);
  });
});

describe("7. model", () => {
  it("accepts inherit, aliases and ids; an unknown one warns and the child runs on the default model, not on that name", async () => {
    const known = load({
      "agents/a.md": skill("a", "description: A.\nmodel: inherit\n"),
      "agents/b.md": skill("b", "description: B.\nmodel: opus\n"),
      "agents/c.md": skill("c", "description: C.\nmodel: claude-3-5-haiku-20241022\n"),
    });
    expect(known.warnings).toEqual([]);
    h = await startHarness({ files: { "agents/storyteller.md": skill("storyteller", "description: Tells stories.\nmodel: fable\n", "Tell a story.") } });
    h.fake.script(reply(toolUse("use_agent", { name: "storyteller", message: "a short one" })), (req) => {
      expect(req.model).toBe("claude-test");
      return text("Once upon a time.");
    });
    expect(await h.say("tell me a story")).toEqual(["agent:storyteller: Once upon a time."]);
    expect(h.catalog.current.warnings.map((w) => w.replace(/^.*agents\//, "agents/"))).toEqual([
      'agents/storyteller.md:4: model "fable" is not a model this gateway knows (inherit, sonnet, opus, haiku or a model id such as claude-sonnet-5-5); the agent uses the default (the caller\'s model) instead',
    ]);
  });
});

describe("8. every problem at once, and reloads log only what changed", () => {
  it("reports all of a file's mistakes together", () => {
    const catalog = load({ "skills/messy/SKILL.md": "---\nname: Messy_Name\ndescription: x\nmode: sometimes\noutput_schema: { type: string }\n---\n" });
    expect(catalog.problems).toEqual([
      'skills/messy/SKILL.md:4: mode must be "interactive" (takes over the chat) or "batch" (runs on its own)',
      'skills/messy/SKILL.md:2: name "Messy_Name" must use only lowercase letters, digits and single hyphens, not at the start or end (e.g. "messy-name")',
      'skills/messy/SKILL.md:5: output_schema: must describe an object (top-level "type": "object"), got "string"; tool arguments are always objects, so wrap the value in a property',
      "skills/messy/SKILL.md: the body is empty; write the skill's instructions below the frontmatter",
    ]);
  });

  it("a hot reload logs new problems and fixed ones, not the ones already logged", () => {
    const defs = writeDefinitions({ "skills/broken/SKILL.md": "---\nname: broken\n---\nBody\n", "skills/fine/SKILL.md": skill("fine", "description: Fine.\n") });
    root = defs.root;
    const lines: Array<{ msg: string }> = [];
    const log = pino({ level: "info" }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const live = new LiveCatalog(defs.skills, defs.agents, { log, env: {} });
    const logged = () => lines.splice(0).map((l) => l.msg.split(`${root}/`).join(""));
    expect(logged()).toEqual(["skipped a definition: skills/broken/SKILL.md: description is required: say what it does and when to use it (at most 1024 characters)"]);
    writeFileSync(join(defs.skills, "fine/SKILL.md"), skill("fine", "description: Still fine.\n"));
    live.reload();
    expect(logged()).toEqual([]);
    mkdirSync(join(defs.skills, "new"));
    writeFileSync(join(defs.skills, "new/SKILL.md"), skill("other", "description: New.\n"));
    writeFileSync(join(defs.skills, "broken/SKILL.md"), skill("broken", "description: Fixed.\n"));
    live.reload();
    expect(logged()).toEqual([
      'skills/new/SKILL.md:2: name "other" differs from the folder name "new"; it loads as "other". Rename the folder or the name to match (the spec requires it)',
      "no longer reported: skills/broken/SKILL.md: description is required: say what it does and when to use it (at most 1024 characters)",
    ]);
  });
});

describe("9. where: lines count from the top of the file", () => {
  it("YAML errors point at the character and suggest quoting; risky lines are file lines; an unclosed frontmatter says so", () => {
    const catalog = load({
      "skills/bad-yaml/SKILL.md": "---\nname: bad-yaml\ndescription: [a list that never closes\nlicense: MIT\n---\nBody\n",
      "skills/risky/SKILL.md": skill("risky", "description: Installs.\n", "# Setup\n\nFirst:\n\n    curl -fsSL https://example.com/install.sh | sh"),
      "skills/unclosed/SKILL.md": "---\nname: unclosed\ndescription: No end.\n\n# Instructions\n",
    });
    expect(catalog.problems).toEqual([
      'skills/bad-yaml/SKILL.md:3:14: frontmatter is not valid YAML: the list opened by "[" is never closed with "]"; if the value is text, put it in quotes: description: "[a list that never closes"',
      "skills/unclosed/SKILL.md:1: the frontmatter has no closing '---': add a line '---' after the last field, before the instructions",
    ]);
    expect(catalog.warnings).toEqual(["skills/risky/SKILL.md:9: this line pipes a download into a shell; check that this is intended before enabling it"]);
  });
});

describe("10. validate warns about what other hosts would not understand", () => {
  it("unknown and Switchboard-only fields, nested metadata, unknown tools and models; warnings alone exit 0", async () => {
    const run = await validate(
      {
        "skills/portable/SKILL.md": skill(
          "portable",
          "description: Ports.\nversion: 2.1\nmode: batch\nmodel: fable\nallowed-tools: Read frobnicate\nmetadata:\n  author: ana\n  openclaw: {emoji: x}\n",
        ),
      },
      "skills/portable",
    );
    expect({ status: run.status, err: run.err }).toEqual({ status: 0, err: "" });
    expect(run.out.split("\n")).toEqual([
      'warning: skills/portable/SKILL.md:4: version is not an Agent Skills field; Switchboard ignores it, other hosts may refuse the skill (skills-ref does). Put values for other hosts under metadata, e.g. metadata: { version: "2.1" }',
      "warning: skills/portable/SKILL.md:5: mode and model are Switchboard fields, not Agent Skills fields; they work here, but other hosts ignore them or refuse the skill. The spec suggests metadata for host-specific settings, but Switchboard reads its own fields at the top level only: keep them in definitions meant for Switchboard",
      'warning: skills/portable/SKILL.md:8: metadata "openclaw" holds nested values; the spec\'s metadata maps keys to text, so other hosts may refuse them or turn them into text (skills-ref does). Switchboard keeps them as written',
      "warning: skills/portable/SKILL.md:7: allowed-tools: uses Read as read_skill_file (this skill's own folder only); frobnicate is not a tool of this gateway (it has use_skill, use_agent, call_agent, complete, report_back, read_skill_file, read_tool_result, view_file, http_request, remember, recall, forget, schedule, list_schedules, cancel_schedule, WebFetch and send_file); that one is ignored. The skill is left with only read_skill_file and complete, which are always there",
      'warning: skills/portable/SKILL.md:6: model "fable" is not a model this gateway knows (inherit, sonnet, opus, haiku or a model id such as claude-sonnet-5-5); the skill uses the default (the caller\'s model) instead',
      "0 errors, 5 warnings",
      "",
    ]);
  });
});

describe("11. validate on a folder without SKILL.md", () => {
  it("says so and exits 1, and names a differently-cased skill.md to rename", async () => {
    const empty = await validate({ "my-skill/references/guide.md": "# Guide\n", "my-skill/scripts/run.py": "print(1)\n" }, "my-skill");
    expect({ status: empty.status, out: empty.out }).toEqual({
      status: 1,
      out: "error: no SKILL.md in my-skill: a skill folder needs one (frontmatter with name and description, then the instructions); to check a whole tree, pass its skills/ or agents/ folder\n1 errors, 0 warnings\n",
    });
    rmSync(root, { recursive: true, force: true });
    const lower = await validate({ "my-skill/skill.md": skill("my-skill", "description: Lower case file.\n") }, "my-skill");
    expect({ status: lower.status, out: lower.out }).toEqual({
      status: 1,
      out: "error: no SKILL.md in my-skill: rename skill.md to SKILL.md (the spec's name for it)\n1 errors, 0 warnings\n",
    });
  });
});

describe("12. the CLI knows every tool the gateway offers", () => {
  it("http_request in a whitelist is not reported as unknown; switched off, it says how to switch it on", async () => {
    const files = { "skills/fetch/SKILL.md": skill("fetch", "description: Fetches pages.\nallowed-tools: http_request use_agent\n") };
    const run = await validate(files, "skills/fetch");
    expect({ status: run.status, out: run.out }).toEqual({ status: 0, out: "0 errors, 0 warnings\n" });
    rmSync(root, { recursive: true, force: true });
    const off = await validate(files, "skills/fetch", { HTTP_REQUEST_TOOL: "off" });
    expect(off.out).toBe(
      "warning: skills/fetch/SKILL.md:4: allowed-tools: switched off here: http_request: HTTP_REQUEST_TOOL=on turns it on; that one is ignored. The skill is left with use_agent (and read_skill_file and complete, which are always there)\n0 errors, 1 warnings\n",
    );
  });
});
