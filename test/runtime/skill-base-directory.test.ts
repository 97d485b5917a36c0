// A skill's activation states its folder as Claude Code does — `Base directory for this skill: <path the tools see>` —
// when its tools can see that folder (Read, Glob, Grep, Bash: mounted read-only at /skills/<name>), so the body's
// `python3 <base>/scripts/x.py` works (OpenClaw's `{baseDir}` is that path too). Without such tools the skill reads its files with read_skill_file instead.
import { afterEach, describe, expect, it } from "vitest";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, systemText, text, toolUse } from "../fakes/anthropic/server.js";
import { skillFile, startHarness, type Harness } from "../helpers/harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A stand-in under a workspace tool's name: only the names decide what the prompt says. */
const named = (name: string): Tool => ({ spec: { name, description: name, input_schema: { type: "object" } }, idempotent: true, run: async () => ({ content: "" }) });

const FILES = {
  ...skillFile("fill-form", "Run `python3 {baseDir}/scripts/fill.py form.pdf` to fill the form.", "allowed-tools: Bash(python3:*) Read\n"),
  "skills/fill-form/scripts/fill.py": "print('filled')\n",
};

async function childPrompt(skill: string, tools: Tool[]): Promise<string> {
  h = await startHarness({ files: FILES, tools });
  let prompt = "";
  h.fake.script(reply(toolUse("use_skill", { name: skill, message: "go" })), (req) => {
    prompt = systemText(req);
    return text("done?");
  });
  await h.say("start");
  return prompt;
}

describe("a skill's base directory", () => {
  it("opens the activation text where the skill's tools see its folder, and says the folder is read-only", async () => {
    const prompt = await childPrompt("fill-form", [named("Read"), named("Bash")]);
    expect(prompt.startsWith("Base directory for this skill: /skills/fill-form\n\nRun `python3 /skills/fill-form/scripts/fill.py form.pdf`")).toBe(true);
    expect(prompt).toContain(
      "Your skill folder is /skills/fill-form, read-only: read its files there and run its scripts from there (e.g. python3 /skills/fill-form/scripts/<script>)",
    );
    expect(prompt).not.toContain("read_skill_file");
  });

  it("is not stated where no tool sees the folder: read_skill_file reads it", async () => {
    const prompt = await childPrompt("fill-form", []);
    expect(prompt).not.toContain("Base directory");
    expect(prompt).toContain("read a file with read_skill_file");
  });
});
