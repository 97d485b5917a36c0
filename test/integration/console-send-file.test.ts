// send_file in the terminal chat as a user runs it (`npm run chat -- --jsonl`, a real child process, the real SDK,
// the strict fake Messages API): the file is saved under DATA_DIR/files and announced as one JSON line
// {"type":"file","filename","path","mime","agent"}, before the answer that follows it.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { processEnv, run, type Proc } from "./child-process.js";

let fake: FakeAnthropic;
let root: string;
let env: Record<string, string>;
const procs: Proc[] = [];

beforeEach(async () => {
  fake = await startFakeAnthropic();
  const defs = writeDefinitions({});
  root = defs.root;
  env = processEnv(fake.url, defs, { LOG_LEVEL: "warn" });
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await fake.close();
  rmSync(root, { recursive: true, force: true });
});

it("saves the agent's file under DATA_DIR/files and prints a file line, then the answer", async () => {
  fake.script(reply(toolUse("send_file", { filename: "../todo.md", content: "- [ ] pack\n", caption: "Your list" })), text("Saved your list."));
  const p = run("providers/console/cli.ts", ["--jsonl"], env);
  procs.push(p);
  p.send({ text: "make me a todo list" });
  await p.line((l) => l.includes("Saved your list."));
  p.child.stdin.end();
  expect(await p.exited).toBe(0);
  const path = join(root, "data", "files", "todo.md");
  expect(p.json()).toEqual([
    { type: "file", filename: "todo.md", path, mime: "text/markdown", agent: "main", caption: "Your list" },
    { type: "message", agent: "main", depth: 1, text: "Saved your list." },
  ]);
  expect(readFileSync(path, "utf8")).toBe("- [ ] pack\n");
});
