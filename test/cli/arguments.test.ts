// The command-line tools refuse what they do not know: usage and exit 2 for a misspelt scenario, option or
// --help (nothing runs), exit 1 for a session that does not exist. Run as a person runs them: child processes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { run } from "../integration/child-process.js";
import { commitStep } from "../helpers/steps.js";

async function tool(entry: string, args: string[], env: Record<string, string> = {}) {
  const proc = run(entry, args, env);
  const code = await proc.exited;
  return { code, stdout: proc.lines.join("\n"), stderr: proc.stderr };
}

/** `args` make the tool print its usage (which contains `usage`) after `said`, and exit 2 before running anything. */
async function refuses(entry: string, args: string[], said: RegExp, usage: string): Promise<void> {
  const result = await tool(entry, args);
  expect(result).toMatchObject({ code: 2, stdout: "" });
  expect(result.stderr).toMatch(said);
  expect(result.stderr).toContain(usage);
}

describe("npm run bench", () => {
  it.each([
    [["--help"], /^usage: npm run bench/],
    [["-h"], /^usage: npm run bench/],
    [["singel-turn"], /^unknown scenario "singel-turn" \(did you mean single-turn\?\)\nusage: npm run bench/],
    [["single-turn", "handoff-rountrip"], /^unknown scenario "handoff-rountrip" \(did you mean handoff-roundtrip\?\)\n/],
    [["--scenario", "startup"], /^unknown option "--scenario"\nusage:/],
  ])("%j prints the usage and exits 2 without running anything", (args, said) => refuses("bench/run.ts", args, said, "scenarios: single-turn, cpu-per-message,"));
});

describe("npm run sim", () => {
  it.each([
    [["--help"], /^usage: npm run sim/],
    [["--sedes", "20"], /^unknown option "--sedes" \(did you mean --seeds\?\)\n/],
    [["--seeds", "many"], /^--seeds must be a whole number from 1, got "many"\n/],
    [["--seed"], /^Option '--seed <value>' argument missing\n/],
    [["436"], /^unexpected argument "436"\n/],
    [["--seed", "436", "--seeds", "10"], /^--seed replays one seed: leave out --seeds and --from\n/],
  ])("%j prints the usage and exits 2 without running anything", (args, said) => refuses("test/sim/cli.ts", args, said, "npm run sim -- --seed N [--events N]"));
});

describe("npm run export", () => {
  let root: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), "switchboard-export-"));
    const store = new SqliteStore(join(root, "data", "switchboard.db"));
    await store.sessions.open("telegram:1001", () => "as_1");
    await store.sessions.open("telegram:1002", () => "as_2");
    await store.sessions.open("slack:T1:D1", () => "as_3");
    await commitStep(store, {
      sessionKey: "slack:T1:D1",
      log: [{ taskId: null, requestId: null, frameId: null, agentSessionId: "as_3", type: "message", payload: { role: "user", content: "hi" } }],
    });
    await store.close();
    env = { DATA_DIR: join(root, "data") };
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("exits 1 for a session that does not exist, and for a start of several keys", async () => {
    expect(await tool("src/cli/export.ts", ["telegram:404"], env)).toEqual({
      code: 1,
      stdout: "",
      stderr: 'no session "telegram:404" and none whose key starts with it (npm run admin -- sessions lists them)\n',
    });
    const ambiguous = await tool("src/cli/export.ts", ["telegram:100"], env);
    expect(ambiguous.code).toBe(1);
    // Most recently active first: the two were made in the same millisecond or one after the other.
    expect(ambiguous.stderr).toMatch(
      /"telegram:100" is the start of 2 session keys \((telegram:1001, telegram:1002|telegram:1002, telegram:1001)\); type more of the key\n/,
    );
  });

  it("exports a session that exists, named whole or by a unique start of its key", async () => {
    expect(await tool("src/cli/export.ts", ["telegram:1001"], env)).toEqual({ code: 0, stdout: "", stderr: "session telegram:1001 has no log entries yet\n" });
    const [whole, prefix] = await Promise.all([tool("src/cli/export.ts", ["slack:T1:D1"], env), tool("src/cli/export.ts", ["slack:"], env)]);
    expect(whole).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(whole.stdout)).toMatchObject({ seq: 1, type: "message", session: "slack:T1:D1", role: "user", content: "hi" });
    expect(prefix).toEqual({ code: 0, stdout: whole.stdout, stderr: "exporting slack:T1:D1\n" });
  });

  it("a missing key or a second one is a usage error (exit 2)", async () => {
    const [none, two] = await Promise.all([tool("src/cli/export.ts", [], env), tool("src/cli/export.ts", ["a", "b"], env)]);
    expect(none).toMatchObject({ code: 2, stdout: "" });
    expect(none.stderr).toMatch(/^usage: npm run export -- <session key>/);
    expect(two.stderr).toMatch(/^one session at a time, got 2\nusage:/);
  });
});
