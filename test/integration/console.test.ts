// The terminal chat as a user runs it: a real child process (`npm run chat -- --jsonl` and
// `npm start`), the real SDK, the strict fake Messages API over HTTP, SQLite on disk.
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { lastUserText, reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { createServer } from "node:net";
import { eventCallback, messageEvent, sendSigned } from "../fakes/slack/events.js";
import { startFakeSlack } from "../fakes/slack/server.js";
import { startFakeTelegram } from "../fakes/telegram/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { nodeArgs, processEnv, run, type Proc } from "./child-process.js";

let fake: FakeAnthropic;
let dir: string;
let env: Record<string, string>;
const procs: Proc[] = [];

beforeEach(async () => {
  fake = await startFakeAnthropic();
  const defs = writeDefinitions({
    "skills/interview/SKILL.md": "---\nname: interview\ndescription: Interviews the user.\n---\nAsk questions.\n",
    "agents/researcher.md": "---\nname: researcher\ndescription: Researches.\n---\nResearch.\n",
  });
  dir = defs.root;
  env = processEnv(fake.url, defs, { LOG_LEVEL: "warn" });
});
afterEach(async () => {
  for (const p of procs.splice(0)) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await fake.close();
  rmSync(dir, { recursive: true, force: true });
});

function chat(extraEnv: Record<string, string> = {}): Proc {
  const p = run("providers/console/cli.ts", ["--jsonl"], { ...env, ...extraEnv });
  procs.push(p);
  return p;
}

describe("npm run chat -- --jsonl", () => {
  it("writes one JSON object per outgoing message with agent and depth, reports bad lines and exits 0 at end of input", async () => {
    fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" })), text("Where to?"));
    const p = chat();
    p.send({ text: "plan a trip", user: "alice" });
    await p.line((l) => l.includes("Where to?"));
    p.send("this is not json");
    p.send({ txt: "wrong field" });
    p.send({ text: "me too!", user: "bob" });
    fake.script(reply(toolUse("complete", { result: "Lisbon" })), text("Booked Lisbon."));
    p.send({ text: "Lisbon", user: "alice" });
    p.child.stdin.end();
    expect(await p.exited).toBe(0);
    expect(p.json()).toEqual([
      { type: "message", agent: "skill:interview", depth: 2, text: "Where to?" },
      { type: "error", message: 'line 2: not valid JSON; expected {"text": "..."}' },
      { type: "error", message: 'line 3: text is required and must be a string; expected {"text": "..."}' },
      {
        type: "message",
        agent: "switchboard",
        depth: 0,
        text: "Sorry, I'm in the middle of a task for someone else in this chat. Please wait until it finishes, or ask them to /cancel it.",
      },
      // HANDBACK_NOTICE (on by default): the conversation is back with main.
      { type: "message", agent: "switchboard", depth: 0, text: "Interview skill finished." },
      { type: "message", agent: "main", depth: 1, text: "Booked Lisbon." },
    ]);
  });

  it("survives SIGKILL while a child frame waits for the user: the restarted chat finishes the conversation", async () => {
    fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan a trip" }, "toolu_main")), text("Where to?"));
    const first = chat();
    first.send({ text: "plan a trip" });
    await first.line((l) => l.includes("Where to?"));
    first.child.kill("SIGKILL");
    await first.exited;

    fake.script(
      (req) => {
        expect(req.messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
        expect(lastUserText(req)).toBe("Porto");
        return reply(toolUse("complete", { result: "Porto" }));
      },
      (req) => {
        expect(JSON.stringify(req.messages.at(-1))).toContain("toolu_main");
        return text("Porto it is.");
      },
    );
    const second = chat();
    second.send({ text: "Porto" });
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
    expect(second.json()).toEqual([
      { type: "message", agent: "switchboard", depth: 0, text: "Interview skill finished." },
      { type: "message", agent: "main", depth: 1, text: "Porto it is." },
    ]);
    expect(fake.rejected()).toEqual([]);
  });

  it("survives SIGKILL in the middle of a turn: the unfinished request resumes on the next start", async () => {
    let hung!: () => void;
    const hanging = new Promise<void>((r) => (hung = r));
    fake.script(reply(toolUse("use_skill", { name: "interview", message: "plan" })), () => {
      hung();
      return { hang: true };
    });
    const first = chat();
    first.send({ text: "plan a trip" });
    await hanging;
    first.child.kill("SIGKILL");
    await first.exited;

    fake.script(text("Where to?"));
    const second = chat();
    second.child.stdin.end();
    expect(await second.exited).toBe(0);
    expect(second.json()).toEqual([{ type: "message", agent: "skill:interview", depth: 2, text: "Where to?" }]);

    // The context log holds each step once.
    const exported = execFileSync(process.execPath, [...nodeArgs("src/cli/export.ts"), "console:local"], {
      env: { ...process.env, ...env },
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; role?: string; agent_name?: string });
    expect(exported.map((e) => (e.type === "message" ? `${e.type}:${e.role}` : e.type))).toEqual([
      "message:user",
      "message:assistant",
      "agent_session",
      "message:user",
      "message:assistant",
    ]);
  });
});

describe("npm start", () => {
  it("with no chat-platform credentials runs the terminal chat, keeps running when stdin closes, and stops on SIGTERM", async () => {
    fake.script(text("Hello from main."));
    const p = run("src/main.ts", [], { ...env, LOG_LEVEL: "info" });
    procs.push(p);
    p.send("hi there");
    expect(await p.line((l) => l.includes("Hello"))).toBe("[main] Hello from main.");
    p.child.stdin.end();
    await p.logged("terminal chat input closed");
    expect(p.child.exitCode).toBeNull();
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    // It stopped because of the signal, through the graceful path.
    expect(p.stderr).toContain("shutting down");
  });

  it("with TELEGRAM_BOT_TOKEN runs the Telegram bot (and no terminal chat when stdin is not a TTY)", async () => {
    const tg = await startFakeTelegram();
    try {
      fake.script(text("Hello from Telegram."));
      const p = run("src/main.ts", [], {
        ...env,
        TELEGRAM_BOT_TOKEN: tg.token,
        TELEGRAM_API_ROOT: tg.url,
        TELEGRAM_THROTTLE: "off",
        TELEGRAM_ALLOWED_USERS: "42",
      });
      procs.push(p);
      await tg.waitFor("getUpdates");
      tg.userMessage({ chatId: 42, fromId: 42, text: "hi" });
      await tg.waitFor("sendMessage");
      expect(tg.sent(42).map((m) => m.text)).toEqual(["Hello from Telegram."]);
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
      expect(p.lines).toEqual([]);
    } finally {
      await tg.close();
    }
  });

  it("with SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET serves signed Slack events over HTTP", async () => {
    const slack = await startFakeSlack();
    const port = await freePort();
    try {
      fake.script(text("Hello from Slack."));
      const p = run("src/main.ts", [], {
        ...env,
        LOG_LEVEL: "info",
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: "secret",
        SLACK_API_URL: slack.apiUrl,
        SLACK_PORT: String(port),
      });
      procs.push(p);
      await p.logged("slack provider started");
      const ts = slack.userMessage({ channel: "D1", user: "U1", text: "hi" });
      const body = eventCallback(messageEvent({ channel: "D1", user: "U1", text: "hi", ts, channel_type: "im" }), { teamId: slack.teamId });
      expect((await sendSigned(`http://127.0.0.1:${port}/slack/events`, body, "application/json", { secret: "secret" })).status).toBe(200);
      // Streamed (SLACK_STREAMING is on by default): one message, posted as the reply starts, then made whole.
      await slack.waitFor("chat.update", (params) => params.text === "Hello from Slack.");
      expect(slack.posted("D1").map((m) => m.text)).toEqual(["Hello from Slack."]);
      p.child.kill("SIGTERM");
      expect(await p.exited).toBe(0);
    } finally {
      await slack.close();
    }
  });

  it("without ANTHROPIC_API_KEY starts and answers every message with what to set", async () => {
    const { ANTHROPIC_API_KEY: _omit, ...noKey } = env;
    const p = run("src/main.ts", [], noKey);
    procs.push(p);
    p.send("hi");
    expect(await p.line((l) => l.includes("ANTHROPIC_API_KEY"))).toMatch(/^· .*set ANTHROPIC_API_KEY/);
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect(fake.calls).toHaveLength(0);
  });

  it("refuses an invalid variable with a message that names it", async () => {
    const p = run("src/main.ts", [], { ...env, MAX_ITERATIONS: "lots" });
    procs.push(p);
    expect(await p.exited).toBe(1);
    expect(p.stderr).toContain('MAX_ITERATIONS (set in the environment): must be a whole number ≥ 1, got "lots"');
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
