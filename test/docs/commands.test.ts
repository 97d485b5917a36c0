// Everything a person can type is in the docs: every npm script, every subcommand and option of the command-line
// tools, every benchmark scenario, every chat command, and every environment variable the code reads.
import { describe, expect, it } from "vitest";
import type { ChatCommand } from "../../src/gateway/commands.js";
import { CHAT_COMMANDS as TABLE } from "../../src/gateway/command-table.js";
import { parseCommand } from "../../src/gateway/commands.js";
import { envReadsOf, scenariosOf, toolsOf, undocumentedCommands } from "./commands.js";
import { docFiles, filesUnder, read, withoutCodeBlocks } from "./markdown.js";

const docs = docFiles().map(read).join("\n");
const scripts = (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts;
const tools = toolsOf(scripts, read);

/** Every chat command: the gateway's table of them, so a new command is checked here as soon as it is added. */
const CHAT_COMMANDS = Object.keys(TABLE) as ChatCommand[];

/** Read by the system or by every process, not Switchboard's to document. */
const SYSTEM_VARIABLES = ["PATH", "HOME"];

describe("the commands", () => {
  it("are read from the tools as they are: admin's five subcommands, the chat's options, user's", () => {
    const byScript = Object.fromEntries(tools.map((t) => [t.script, t]));
    expect(byScript.admin).toMatchObject({
      entry: "src/cli/admin.ts",
      subcommands: ["sessions", "show", "approvals", "stuck", "schedules"],
      options: ["after", "json", "limit"],
    });
    expect(byScript.chat).toMatchObject({ entry: "providers/console/cli.ts", subcommands: [], options: ["jsonl", "session", "user"] });
    expect(byScript.user).toMatchObject({ subcommands: ["export", "delete"], options: ["out", "yes"] });
    expect(byScript.skills!.subcommands).toEqual(["list", "validate", "lock"]);
    expect(byScript.test).toMatchObject({ typed: "npm test", entry: null });
  });

  it("are all in the docs: every npm script, subcommand and option", () => {
    expect(undocumentedCommands(docs, tools)).toEqual([]);
  });

  it("are reported when one is missing from the docs", () => {
    const without = docs
      .replace(/npm run admin -- stuck/g, "npm run admin -- st")
      .replace(/npm run migrate/g, "npm run mig")
      .replace(/--after/g, "--later");
    expect(undocumentedCommands(without, tools)).toEqual([
      "npm run migrate (package.json) is not in the docs",
      "npm run admin -- stuck (src/cli/admin.ts) is not in the docs",
      "--after of npm run admin (src/cli/admin.ts) is on no docs line that names npm run admin",
    ]);
  });

  it("include every benchmark scenario by name", () => {
    const scenarios = scenariosOf(read("bench/run.ts"));
    expect(scenarios).toContain("handoff-roundtrip-postgres");
    expect(scenarios.filter((name) => !docs.includes(`\`${name}\``) && !docs.includes(`| ${name} |`))).toEqual([]);
  });

  it("include every chat command, as /name in the chat page", () => {
    const chats = withoutCodeBlocks(read("docs/admin/chats.md"));
    for (const command of CHAT_COMMANDS) {
      expect(parseCommand(`/${command}`, false), command).toBe(command);
      expect(chats, `/${command}`).toMatch(new RegExp(`\`/${command}[\` ]`));
    }
  });
});

describe("the environment variables the code reads", () => {
  it("are all in the docs", () => {
    // The product's code, and the test suite's own knobs (setup, helpers, simulation); variables that single tests
    // hand to the child processes they start are between the two of them.
    const sources = ["src", "providers", "bench", "test/setup", "test/helpers", "test/sim"].flatMap((dir) => filesUnder(dir, ".ts"));
    const read_ = new Map(sources.map((path) => [path, envReadsOf(read(path))]));
    const variables = new Set([...read_.values()].flat().filter((name) => !SYSTEM_VARIABLES.includes(name)));
    expect(variables).toContain("OTEL_LOG_LEVEL");
    const missing = [...variables].filter((name) => !new RegExp(`(?<![A-Z0-9_])${name}(?![A-Z0-9_])`).test(docs));
    expect(
      missing.map(
        (name) =>
          `${name} (read in ${[...read_]
            .filter(([, names]) => names.includes(name))
            .map(([path]) => path)
            .join(", ")})`,
      ),
    ).toEqual([]);
  });
});
