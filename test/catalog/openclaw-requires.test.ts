// OpenClaw's bundled skills declare what they need under metadata.openclaw.requires: `bins` (programs on PATH),
// `config` (keys of OpenClaw's own settings) and, for some, `env`. Only `env` means anything here; `validate` must
// not claim to read an env gate from a skill that has none. The shapes follow OpenClaw's docs
// (docs.openclaw.ai/tools/skills, "Gating"); the values are made up.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { validatePath } from "../../src/catalog/validate.js";

const KNOWN = ["use_skill", "complete", "read_skill_file"];
let root = "";
afterEach(() => rmSync(root, { recursive: true, force: true }));

function skillsWith(files: Record<string, string>): string {
  root = mkdtempSync(join(tmpdir(), "openclaw-requires-"));
  for (const [name, frontmatter] of Object.entries(files)) {
    mkdirSync(join(root, name));
    writeFileSync(join(root, name, "SKILL.md"), `---\nname: ${name}\n${frontmatter}---\n# ${name}\n\nRun the tool.\n`);
  }
  return root;
}

const nested = (found: ReturnType<typeof validatePath>, skill: string) =>
  found.filter((p) => p.message.includes(`/${skill}/SKILL.md`) && p.message.includes("holds nested values")).map((p) => p.message.replace(/^.*?: /, ""));

describe("validate on OpenClaw's requires block", () => {
  it("mentions the env gate only for a skill whose requires lists env", () => {
    const dir = skillsWith({
      "disk-usage": 'description: Shows disk usage with a CLI.\nmetadata: { "openclaw": { "emoji": "💽", "requires": { "bins": ["duf"] } } }\n',
      "team-chat": 'description: Posts to the team chat.\nmetadata: { "openclaw": { "requires": { "config": ["channels.chat"] } } }\n',
      "maps-lookup": 'description: Looks up places.\nmetadata: { "openclaw": { "requires": { "bins": ["mapcli"], "env": ["MAPS_KEY"] } } }\n',
    });
    const found = validatePath(dir, { env: {}, knownTools: KNOWN });
    const plain = `metadata "openclaw" holds nested values; the spec's metadata maps keys to text, so other hosts may refuse them or turn them into text (skills-ref does). Switchboard keeps them as written`;
    expect(nested(found, "disk-usage")).toEqual([plain]);
    expect(nested(found, "team-chat")).toEqual([plain]);
    expect(nested(found, "maps-lookup")).toEqual([`${plain} and reads metadata.openclaw.requires.env as env`]);
    expect(found.filter((p) => p.message.includes("needs ")).map((p) => p.message.replace(/^.*SKILL\.md: /, ""))).toEqual([
      "needs MAPS_KEY, which is not set; it is listed as unavailable until it is",
    ]);
  });
});
