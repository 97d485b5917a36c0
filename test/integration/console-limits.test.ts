// The daily quota and flood control in the terminal chat as a user runs it: `npm run chat -- --jsonl` as a child
// process, configured by its environment, against the strict fake Messages API. The clock is the real one here (the
// day's reset with a moved clock is test/providers/console/limits.test.ts and test/security/quota-zones.test.ts).
import { rmSync } from "node:fs";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { processEnv, run, type Proc } from "./child-process.js";

let fake: FakeAnthropic;
let dir: string;
let env: Record<string, string>;
const procs: Proc[] = [];

beforeEach(async () => {
  fake = await startFakeAnthropic();
  fake.fallback(() => text("ok"));
  const defs = writeDefinitions({});
  dir = defs.root;
  env = processEnv(fake.url, defs, { LOG_LEVEL: "warn" });
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function chat(extraEnv: Record<string, string>): Proc {
  const p = run("providers/console/cli.ts", ["--jsonl"], { ...env, ...extraEnv });
  procs.push(p);
  return p;
}

it("tells the user over USER_DAILY_MESSAGES which limit and when it resets in DEFAULT_TIMEZONE, once", async () => {
  const p = chat({ USER_DAILY_MESSAGES: "1", DEFAULT_TIMEZONE: "Asia/Tokyo" });
  p.send({ text: "one" });
  await p.line((l) => l.includes('"ok"'));
  p.send({ text: "two" });
  await p.line((l) => l.includes("USER_DAILY_MESSAGES"));
  p.send({ text: "three" });
  p.child.stdin.end();
  expect(await p.exited).toBe(0);
  const said = p.json().map((m) => m.text as string);
  expect(said).toHaveLength(2);
  expect(said[0]).toBe("ok");
  expect(said[1]).toMatch(
    /^You've sent 1 message today, the daily limit \(USER_DAILY_MESSAGES\), so I can't take more\. It resets at 00:00 on \w{3} \d{1,2} \w{3} \(Asia\/Tokyo\), in (\d+ h )?\d+ min\.$/,
  );
  expect(fake.accepted()).toHaveLength(1);
});

it("answers a message over USER_MESSAGES_PER_MINUTE with how long to wait", async () => {
  const p = chat({ USER_MESSAGES_PER_MINUTE: "1" });
  p.send({ text: "one" });
  await p.line((l) => l.includes('"ok"'));
  p.send({ text: "two" });
  p.child.stdin.end();
  expect(await p.exited).toBe(0);
  expect(p.json().map((m) => m.text)).toEqual([
    "ok",
    expect.stringMatching(
      /^You're sending messages faster than I can take them \(at most 1 a minute\), so I'm dropping some\. Wait \d+ s and send your message again\.$/,
    ),
  ]);
  expect(fake.accepted()).toHaveLength(1);
});
