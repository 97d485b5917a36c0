// `npm run skills -- list` says, per definition, whether every tool it declares is available here, and for each one
// that is not, why and what would change that (a setting, a package to install, an MCP server to configure).
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { workspaceToolsHere } from "../../src/cli/tool-availability.js";
import { writeDefinitions } from "../helpers/harness.js";
import { nodeArgs } from "../integration/child-process.js";

let root = "";
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = "";
});

function list(files: Record<string, string>, env: Record<string, string> = {}) {
  root = writeDefinitions(files).root;
  // The copy compiled once for the run (test/setup/build.ts), as the other command-line tests start it: the tsx binary
  // started a second process and compiled the sources again for each call.
  const run = spawnSync(process.execPath, [...nodeArgs("src/cli/skills.ts"), "list"], {
    cwd: root,
    encoding: "utf8",
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", SKILLS_DIR: "skills", AGENTS_DIR: "agents", ...env },
  });
  return { status: run.status, out: run.stdout };
}

const FILES = {
  "skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Fills PDF forms.\nallowed-tools: Bash(python3:*) WebSearch\n---\nRun the script.\n",
  "agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews.\ntools: WebFetch, mcp__github__create_issue\n---\nReview.\n",
  "agents/reader.md": "---\nname: reader\ndescription: Reads pages.\ntools: WebFetch\n---\nRead.\n",
  "agents/plain.md": "---\nname: plain\ndescription: No whitelist.\n---\nTalk.\n",
};

describe("skills -- list and declared tools", () => {
  it("marks each definition all, inherited or lacking, and says why each missing tool is missing", () => {
    const { status, out } = list(FILES, { WORKSPACE: "off" });
    expect(status).toBe(0);
    const column = Object.fromEntries(
      out
        .split("\n")
        .slice(1, 5)
        .map((row) => [row.split(/\s+/)[0], row.split(/\s+/)[5]]),
    );
    expect(column).toEqual({ pdf: "lacks", plain: "inherited", reader: "all", reviewer: "lacks" });
    expect(out).toContain("tools: skill pdf lacks Bash(python3:*) (WORKSPACE=off: WORKSPACE=on turns it on), WebSearch (WEB_SEARCH=on turns it on)\n");
    expect(out).toContain('tools: agent reviewer lacks mcp__github__create_issue (a tool of MCP server "github", which is not in the MCP configuration)\n');
    expect(out).not.toContain("tools: agent reader");
  });

  it("WEB_SEARCH=on gives WebSearch to the skill that declares it", () => {
    const { out } = list(FILES, { WORKSPACE: "off", WEB_SEARCH: "on" });
    expect(out).toContain("tools: skill pdf lacks Bash(python3:*) (WORKSPACE=off: WORKSPACE=on turns it on)\n");
  });
});

describe("the workspace tools' reasons", () => {
  const noSandbox = async () => ({ ok: false as const, ripgrep: null, problem: "bubblewrap (bwrap) is not installed", fix: "install bubblewrap 0.8 or newer" });

  it("name the missing sandbox for Bash and ripgrep for Glob and Grep", async () => {
    expect(await workspaceToolsHere({ WORKSPACE: true }, noSandbox)).toEqual({
      offered: ["Read", "Write", "Edit"],
      off: {
        Glob: "ripgrep is not installed (apt-get install ripgrep)",
        Grep: "ripgrep is not installed (apt-get install ripgrep)",
        Bash: "no sandbox here: bubblewrap (bwrap) is not installed; install bubblewrap 0.8 or newer",
      },
    });
  });

  it("offer all six with a sandbox and ripgrep, and do not probe when WORKSPACE=off", async () => {
    const sandbox = async () => ({ ok: true as const, ripgrep: { path: "/usr/bin/rg", inSandbox: true } });
    expect(await workspaceToolsHere({ WORKSPACE: true }, sandbox)).toEqual({ offered: ["Read", "Write", "Edit", "Glob", "Grep", "Bash"], off: {} });
    const probe = async () => {
      throw new Error("probed");
    };
    expect((await workspaceToolsHere({ WORKSPACE: false }, probe)).off.Bash).toBe("WORKSPACE=off: WORKSPACE=on turns it on");
  });

  it("give a skill that declares Bash its tool where the sandbox runs (npm start offers them)", () => {
    const { out } = list(FILES, { WEB_SEARCH: "on" });
    expect(out).not.toContain("tools: skill pdf");
  });
});
