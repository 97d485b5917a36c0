// A chat platform that cannot be reached, or refuses its token, never blocks anything: the real providers (grammY,
// Bolt) connect in the background through PlatformConnection, against the strict fakes behind a door that is closed,
// black-holed or open. Deadlines and backoff are timers fired by hand; nothing waits for real time to pass.
import type { Writable } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { SlackProvider } from "../../providers/slack/slack.js";
import { TelegramProvider } from "../../providers/telegram/telegram.js";
import { PlatformConnection, type ConnectionState, type PlatformProvider } from "../../src/gateway/connection.js";
import { createLogger } from "../../src/log.js";
import { text } from "../fakes/anthropic/server.js";
import { startFakeSlack, type FakeSlack } from "../fakes/slack/server.js";
import { startFakeSocketMode } from "../fakes/slack/socket-mode.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram/server.js";
import { openDoor, type Door } from "../helpers/door.js";
import { startHarness, type Harness } from "../helpers/harness.js";
import { providerOptions } from "../helpers/slack-world.js";
import { manualTimeouts } from "../helpers/timers.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A logger whose lines the test reads: level, message and platform. */
function capturedLog() {
  const out: string[] = [];
  const log = createLogger("debug", { write: (line: string) => void out.push(line) } as unknown as Writable);
  const lines = (minLevel = 40) =>
    out
      .map((l) => JSON.parse(l) as { level: number; msg: string })
      .filter((l) => l.level >= minLevel)
      .map((l) => `${l.level === 40 ? "warn" : "error"}: ${l.msg}`);
  return { log, lines };
}

/** The connection, its clock, and a way to wait for its next state of a kind. */
function connection(name: string, provider: PlatformProvider, log: ReturnType<typeof capturedLog>["log"]) {
  const clock = manualTimeouts();
  const waiters: Array<{ status: ConnectionState["status"]; resolve: (s: ConnectionState) => void }> = [];
  const conn = new PlatformConnection(name, provider, {
    log,
    timers: clock.timers,
    onChange: (state) => {
      for (const w of waiters.filter((w) => w.status === state.status)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(state);
      }
    },
  });
  cleanups.push(() => conn.stop());
  const next = (status: ConnectionState["status"]) => new Promise<ConnectionState>((resolve) => waiters.push({ status, resolve }));
  return { conn, clock, next };
}

async function harness(): Promise<Harness> {
  const h = await startHarness({ files: {} });
  cleanups.push(() => h.close());
  return h;
}

describe("Telegram", () => {
  async function setup(mode: "closed" | "blackhole" | "open", token?: string) {
    const tg: FakeTelegram = await startFakeTelegram();
    cleanups.push(() => tg.close());
    const door: Door = await openDoor(tg.url, mode);
    cleanups.push(() => door.close());
    const h = await harness();
    const captured = capturedLog();
    const provider = new TelegramProvider(h.gateway, {
      token: token ?? tg.token,
      apiRoot: door.url(),
      allowedUsers: [],
      throttle: false,
      maxRetries: 0,
      streaming: "off",
      log: captured.log,
    });
    return { tg, door, h, captured, ...connection("Telegram", provider, captured.log) };
  }

  it("keeps trying an unreachable Bot API with growing waits, says so once, and serves the chat once it answers", async () => {
    const { tg, door, h, captured, conn, clock, next } = await setup("closed");
    const failed = next("retrying");
    conn.start();
    expect(conn.status()).toBe("connecting…");
    expect(conn.readiness()).toBe("Telegram connecting…");
    await failed;
    const unreachable = `is unreachable at ${door.url()} (connect ECONNREFUSED 127.0.0.1:${door.port})`;
    expect(conn.state).toEqual({ status: "retrying", attempt: 1, retryInMs: 1000, problem: { kind: "unreachable", text: unreachable } });
    expect(conn.readiness()).toBe(`Telegram ${unreachable}; trying again in 1 s`);
    // The attempt's deadline was cleared: only the wait before the next attempt is pending.
    expect(clock.delays()).toEqual([1000]);

    const again = next("retrying");
    clock.fire(1000);
    expect((await again).status === "retrying" && conn.state).toMatchObject({ attempt: 2, retryInMs: 2000 });
    // One line for the problem, not one per attempt.
    expect(captured.lines()).toEqual([`warn: Telegram ${unreachable}; trying again in 1 s, then less and less often`]);

    await door.set("open");
    const connected = next("connected");
    clock.fire(2000);
    expect(await connected).toEqual({ status: "connected", identity: "@switchboard_test_bot (long polling)" });
    expect(conn.readiness()).toBeNull();
    expect(clock.delays()).toEqual([]);
    h.fake.script(text("Hello from the bot."));
    tg.userMessage({ chatId: 1001, fromId: 1001, text: "hi" });
    await tg.waitFor("sendMessage", (params) => params.text === "Hello from the bot.");
  });

  it("gives up on an attempt nobody answers (a black hole) at the deadline, and tries again", async () => {
    const { door, conn, clock, next } = await setup("blackhole");
    conn.start();
    await door.accepted(1);
    expect(clock.delays()).toEqual([30_000]);
    const failed = next("retrying");
    clock.fire(30_000);
    expect(await failed).toEqual({ status: "retrying", attempt: 1, retryInMs: 1000, problem: { kind: "unreachable", text: "is unreachable: no answer within 30 s" } });
    await door.set("open");
    const connected = next("connected");
    clock.fire(1000);
    await connected;
  });

  it("says the token was refused (Telegram's 401), and starts nothing with it", async () => {
    const { tg, captured, conn, next } = await setup("open", "123456:REVOKED-TOKEN");
    conn.start();
    const state = await next("retrying");
    expect(state).toMatchObject({ problem: { kind: "refused", text: "refused the bot token (401 Unauthorized): check TELEGRAM_BOT_TOKEN" } });
    expect(captured.lines()).toEqual([
      "error: Telegram refused the bot token (401 Unauthorized): check TELEGRAM_BOT_TOKEN; trying again in 1 s, then less and less often",
    ]);
    expect(tg.calls.map((c) => c.method)).toEqual(["getMe"]);
    expect(tg.calls[0]!.response).toEqual({ ok: false, error_code: 401, description: "Unauthorized" });
  });

  it("stops cleanly while it waits to try again: nothing stays scheduled", async () => {
    const { conn, clock, next } = await setup("closed");
    conn.start();
    await next("retrying");
    await conn.stop();
    expect(clock.delays()).toEqual([]);
    expect(conn.readiness()).toBe("Telegram stopped");
  });
});

describe("Slack", () => {
  async function setup(options: { mode?: "closed" | "open"; botToken?: string; socket?: { appToken: string } } = {}) {
    const slack: FakeSlack = await startFakeSlack();
    cleanups.push(() => slack.close());
    const door = await openDoor(slack.apiUrl, options.mode ?? "open");
    cleanups.push(() => door.close());
    let mode: { signingSecret: string } | { appToken: string } = { signingSecret: "secret" };
    if (options.socket) {
      const socket = await startFakeSocketMode(slack);
      cleanups.push(() => socket.close());
      mode = options.socket;
    }
    const h = await harness();
    const captured = capturedLog();
    const provider = new SlackProvider(
      h.gateway,
      providerOptions(slack, mode, { apiUrl: door.url("/api/"), log: captured.log, ...(options.botToken ? { botToken: options.botToken } : {}) }),
    );
    return { slack, door, captured, ...connection("Slack", provider, captured.log) };
  }

  it("says Slack is unreachable, and connects once it answers", async () => {
    const { door, captured, conn, clock, next } = await setup({ mode: "closed" });
    conn.start();
    const state = await next("retrying");
    const unreachable = `is unreachable at ${door.url("/api/")} (connect ECONNREFUSED 127.0.0.1:${door.port})`;
    expect(state).toMatchObject({ problem: { kind: "unreachable", text: unreachable } });
    // One line, the client's own notes on the failed request only at debug.
    expect(captured.lines()).toEqual([`warn: Slack ${unreachable}; trying again in 1 s, then less and less often`]);
    await door.set("open");
    const connected = next("connected");
    clock.fire(1000);
    expect(await connected).toMatchObject({ identity: expect.stringMatching(/^bot U0BOT in team T0TEST \(HTTP events on port \d+\)$/) });
  });

  it("says which token Slack refused: the bot token (auth.test: invalid_auth) or the app-level one (apps.connections.open)", async () => {
    const bot = await setup({ botToken: "xoxb-revoked" });
    bot.conn.start();
    expect(await bot.next("retrying")).toMatchObject({ problem: { kind: "refused", text: "refused the bot token (invalid_auth): check SLACK_BOT_TOKEN" } });
    expect(bot.captured.lines()).toEqual(["error: Slack refused the bot token (invalid_auth): check SLACK_BOT_TOKEN; trying again in 1 s, then less and less often"]);

    const app = await setup({ socket: { appToken: "xapp-1-A0TEST-1-wrong" } });
    app.conn.start();
    expect(await app.next("retrying")).toMatchObject({ problem: { kind: "refused", text: "refused the app-level token (invalid_auth): check SLACK_APP_TOKEN" } });
  });
});
