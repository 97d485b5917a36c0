// Stopping `npm start` and `npm run chat` as a person or a supervisor does: real child processes, the real SDK,
// the strict fake Messages API over HTTP, SQLite on disk.
import { once } from "node:events";
import { rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { afterEach, beforeEach, expect, it } from "vitest";
import { holdStream, startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { eventCallback, messageEvent, sendSigned } from "../fakes/slack/events.js";
import { startFakeSlack, type FakeSlack } from "../fakes/slack/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { freePort, processEnv, run, type Proc } from "./child-process.js";

let fake: FakeAnthropic;
let dir: string;
let env: Record<string, string>;
const procs: Proc[] = [];
const cleanups: Array<() => unknown> = [];

beforeEach(async () => {
  fake = await startFakeAnthropic();
  const defs = writeDefinitions({});
  dir = defs.root;
  env = processEnv(fake.url, defs);
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function start(entry: string, args: string[], extra: Record<string, string> = {}): Proc {
  const p = run(entry, args, { ...env, ...extra });
  procs.push(p);
  return p;
}

/**
 * A Slack client that sent its request's headers and holds back the body: the receiver cannot close until it
 * ends, so the graceful stop waits. `Expect: 100-continue` makes the server confirm it is handling the request.
 */
async function slowSlackClient(port: number): Promise<Socket> {
  const socket = connect(port, "127.0.0.1");
  cleanups.push(() => socket.destroy());
  await once(socket, "connect");
  socket.write("POST /slack/events HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n");
  const [answer] = (await once(socket, "data")) as [Buffer];
  expect(answer.toString()).toContain("100 Continue");
  socket.write('{"type":');
  return socket;
}

it("npm start: the first SIGINT stops gracefully, a second one while that waits forces the exit with 130; the turn resumes at the next start", async () => {
  const slack: FakeSlack = await startFakeSlack();
  cleanups.push(() => slack.close());
  const port = await freePort();
  const slackEnv = {
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: "secret",
    SLACK_API_URL: slack.apiUrl,
    SLACK_PORT: String(port),
    SLACK_STREAMING: "off",
  };
  const hold = holdStream(1);
  fake.script({ ...text("Half of a reply."), stream: hold.stream });
  const p = start("src/main.ts", [], slackEnv);
  await p.logged("slack provider started");
  const ts = slack.userMessage({ channel: "D1", user: "U1", text: "hi" });
  const body = eventCallback(messageEvent({ channel: "D1", user: "U1", text: "hi", ts, channel_type: "im" }), { teamId: slack.teamId });
  expect((await sendSigned(`http://127.0.0.1:${port}/slack/events`, body, "application/json", { secret: "secret" })).status).toBe(200);
  await hold.paused; // a model reply is being written
  await slowSlackClient(port);

  p.child.kill("SIGINT");
  await p.logged("again to force");
  expect(p.child.exitCode).toBeNull(); // still stopping: the slow client holds the Slack receiver open
  p.child.kill("SIGINT");
  expect(await p.exited).toBe(130);
  expect(p.stderr).toContain("forced stop: in-flight turns resume at the next start");
  expect(slack.posted("D1")).toEqual([]);

  // What was committed is durable: the next start answers the message that was in flight.
  fake.script(text("Hello after the restart."));
  const again = start("src/main.ts", [], slackEnv);
  await slack.waitFor("chat.postMessage", (params) => params.text === "Hello after the restart.");
  again.child.kill("SIGTERM");
  expect(await again.exited).toBe(0);
}, 90_000); // two starts of the gateway, each a few seconds on a busy machine

it("npm start: a single SIGINT with nothing in flight stops and exits 0", async () => {
  const p = start("src/main.ts", []);
  await p.logged("switchboard started");
  p.child.kill("SIGINT");
  expect(await p.exited).toBe(0);
  expect(p.stderr).toContain("shutting down: finishing or checkpointing in-flight turns (press Ctrl-C again to force)");
  expect(p.stderr).not.toContain("forced stop");
});

it("npm run chat: an empty LOG_LEVEL (as copied from .env.example) keeps the chat's default, errors only", async () => {
  fake.script(text("Hello."));
  const p = start("providers/console/cli.ts", ["--jsonl"], { LOG_LEVEL: "", LOG_FORMAT: "" });
  p.send({ text: "hi" });
  p.child.stdin.end();
  expect(await p.exited).toBe(0);
  expect(p.json()).toEqual([{ type: "message", agent: "main", depth: 1, text: "Hello." }]);
  // At "info" (what an empty value meant before), the start alone logs "catalog loaded" and "store ready".
  expect(p.stderr).toBe("");
});
