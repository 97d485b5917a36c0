// The Telegram provider on the test harness: real grammY against the fake Bot API, with the real gateway and
// runtime and the strict fake Messages API. Shared by the provider's own tests and the security suite.
import { readFileSync } from "node:fs";
import type { ProviderSink } from "../../src/gateway/types.js";
import { silentLogger } from "../../src/log.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { TelegramProvider, type TelegramOptions } from "../../providers/telegram/telegram.js";
import { startFakeTelegram, type FakeTelegram, type SentMessage, type TgUpdate } from "../fakes/telegram/server.js";
import type { HarnessOptions } from "./harness.js";
import { ProviderWorld } from "./provider-world.js";

export const ALICE = 1001;
export const BOB = 1002;

class TelegramWorld extends ProviderWorld<FakeTelegram, TelegramProvider> {
  /** What the last booted provider registered with its gateway: `deliver` is what the outbox calls. */
  sink!: ProviderSink;

  constructor(private readonly files: Record<string, string>) {
    super(startFakeTelegram, "switchboard-tg-");
  }

  /** This test's fake Bot API. */
  get tg(): FakeTelegram {
    return this.platform;
  }

  /**
   * Starts a long-polling bot on a new harness; options such as `webhook` or `apiRoot` override the defaults,
   * `harness` the harness's (its timers, for instance).
   */
  async boot(options: Partial<TelegramOptions> = {}, tools: Tool[] = [], harness: Omit<HarnessOptions, "files" | "tools"> = {}) {
    const h = await this.harness({ ...harness, files: this.files, tools });
    const register = h.gateway.register.bind(h.gateway);
    h.gateway.register = (sink) => {
      if (sink.prefix === "telegram") this.sink = sink;
      register(sink);
    };
    const bot = new TelegramProvider(h.gateway, {
      token: this.tg.token,
      apiRoot: this.tg.url,
      allowedUsers: [],
      throttle: false,
      maxRetries: 0,
      log: silentLogger(),
      // Tests about what a reply says read the first message sent; streaming tests ask for previews explicitly.
      streaming: "off",
      ...options,
    });
    await bot.start();
    this.started(h, bot);
    return { h, bot };
  }

  /** Waits for the n-th message the bot sent to a chat (1-based). */
  async nth(chatId: number, n: number): Promise<SentMessage> {
    await this.tg.waitFor("sendMessage", () => this.tg.sent(chatId).length >= n);
    return this.tg.sent(chatId)[n - 1]!;
  }
}

/** Registers the hooks; read `model` and `tg` inside a test (they are new for each one). `files`: skills and agents. */
export function useTelegramWorld(files: Record<string, string> = {}): TelegramWorld {
  return new TelegramWorld(files);
}

/**
 * A recorded update from test/fixtures/telegram/<name>.json, ready for `tg.pushUpdate` or `bot.handleUpdate`: without
 * its `_source`/`_note` and without `update_id` (the fake numbers what it queues, after what the bot confirmed).
 * `patch` changes the payload inside its one update field (message, edited_message, …), shallowly.
 */
export function telegramFixture(name: string, patch: Record<string, unknown> = {}): Omit<TgUpdate, "update_id"> {
  const raw = JSON.parse(readFileSync(new URL(`../fixtures/telegram/${name}.json`, import.meta.url), "utf8")) as Record<string, unknown>;
  const { _source: _s, _note: _n, update_id: _id, ...update } = raw;
  const [kind, payload] = Object.entries(update)[0]!;
  return { [kind]: { ...(payload as Record<string, unknown>), ...patch } } as Omit<TgUpdate, "update_id">;
}
