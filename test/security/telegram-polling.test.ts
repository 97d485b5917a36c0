// Long polling (@grammyjs/runner) never crashes the process and never prints raw errors to the console:
// failures reach the provider's logger. The real provider against the Bot API fake.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createLogger } from "../../src/log.js";
import { TelegramProvider } from "../../providers/telegram/telegram.js";
import { startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";

const ALICE = 1001;

let model: FakeAnthropic;
let tg: FakeTelegram;
let dir: string;
let logs: Array<{ msg: string; update?: number; err?: { message: string } }>;
let running: Array<{ h: Harness; bot: TelegramProvider }> = [];

beforeEach(async () => {
  model = await startFakeAnthropic();
  tg = await startFakeTelegram();
  dir = mkdtempSync(join(tmpdir(), "switchboard-tg-polling-"));
  logs = [];
  running = [];
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const { h, bot } of running) {
    await bot.stop();
    await h.close();
  }
  await tg.close();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
});

async function boot() {
  const h = await startHarness({ fake: model, dbFile: join(dir, "switchboard.db") });
  const bot = new TelegramProvider(h.gateway, {
    token: tg.token,
    apiRoot: tg.url,
    allowedUsers: [],
    throttle: false,
    maxRetries: 0,
    log: createLogger("debug", { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) }),
  });
  await bot.start();
  running.push({ h, bot });
  return { h, bot };
}

/** Resolves once a line with this message has been logged. */
async function logged(msg: string) {
  await vi.waitFor(() => expect(logs.map((l) => l.msg)).toContain(msg), { timeout: 5000, interval: 5 });
  return logs.find((l) => l.msg === msg)!;
}

it("a revoked token (401 on getUpdates) stops polling with a logged error, not a crash or console output", async () => {
  const consoleError = vi.spyOn(console, "error");
  tg.failNext("getUpdates", { error_code: 401, description: "Unauthorized" });
  await boot();
  const stopped = await logged("telegram long polling stopped; restart the service to resume");
  expect(stopped.err?.message).toMatch(/401: Unauthorized/);
  expect(logs.map((l) => l.msg)).toContain("telegram getUpdates failed");
  expect(consoleError).not.toHaveBeenCalled();
});

it("an update whose handler throws is logged through the provider's logger, and the next one is served", async () => {
  const consoleError = vi.spyOn(console, "error");
  const { h } = await boot();
  const submit = h.gateway.submit.bind(h.gateway);
  let failures = 1;
  h.gateway.submit = (input) => {
    if (failures-- > 0) throw new Error("the store is failing");
    return submit(input);
  };
  const broken = tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "first" });
  expect(await logged("telegram update failed")).toMatchObject({ update: broken.update_id, err: { message: "the store is failing" } });

  model.script(text("second one works"));
  tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "second" });
  await tg.waitFor("sendMessage", () => tg.sent(ALICE).length >= 1);
  expect(tg.sent(ALICE)[0]!.text).toBe("second one works");
  expect(consoleError).not.toHaveBeenCalled();
});
