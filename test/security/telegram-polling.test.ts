// Long polling (@grammyjs/runner) never crashes the process and never prints raw errors to the console:
// failures reach the provider's logger. The real provider against the Bot API fake.
import { afterEach, beforeEach, expect, it, vi } from "vitest";
import { createLogger } from "../../src/log.js";
import { text } from "../fakes/anthropic/server.js";
import { ALICE, useTelegramWorld } from "../helpers/telegram-world.js";

const world = useTelegramWorld();
let logs: Array<{ msg: string; update?: number; err?: { message: string } }>;

beforeEach(() => {
  logs = [];
});
afterEach(() => {
  vi.restoreAllMocks();
});

function boot() {
  return world.boot({ log: createLogger("debug", { write: (line: string) => void logs.push(JSON.parse(line) as (typeof logs)[number]) }) });
}

/** Resolves once a line with this message has been logged. */
async function logged(msg: string) {
  await vi.waitFor(() => expect(logs.map((l) => l.msg)).toContain(msg), { timeout: 5000, interval: 5 });
  return logs.find((l) => l.msg === msg)!;
}

it("a revoked token (401 on getUpdates) stops polling with a logged error, not a crash or console output", async () => {
  const consoleError = vi.spyOn(console, "error");
  world.tg.failNext("getUpdates", { error_code: 401, description: "Unauthorized" });
  await boot();
  const stopped = await logged("telegram long polling stopped: the bot token is revoked or wrong (401); set TELEGRAM_BOT_TOKEN and restart the service");
  expect(stopped.err?.message).toMatch(/401: Unauthorized/);
  expect(logs.map((l) => l.msg)).toContain("telegram getUpdates failed");
  expect(consoleError).not.toHaveBeenCalled();
});

it("an update whose handler throws is logged through the provider's logger, and the next one is served", async () => {
  const consoleError = vi.spyOn(console, "error");
  const { h } = await boot();
  const submit = h.gateway.submit.bind(h.gateway);
  let failures = 1;
  h.gateway.submit = async (input) => {
    if (failures-- > 0) throw new Error("the store is failing");
    return submit(input);
  };
  const broken = world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "first" });
  expect(await logged("telegram update failed")).toMatchObject({ update: broken.update_id, err: { message: "the store is failing" } });

  world.model.script(text("second one works"));
  world.tg.userMessage({ chatId: ALICE, fromId: ALICE, text: "second" });
  await world.tg.waitFor("sendMessage", () => world.tg.sent(ALICE).length >= 1);
  expect(world.tg.sent(ALICE)[0]!.text).toBe("second one works");
  expect(consoleError).not.toHaveBeenCalled();
});
