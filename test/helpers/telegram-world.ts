// The Telegram provider on the test harness: real grammY against the fake Bot API, with the real gateway and
// runtime and the strict fake Messages API. Shared by the provider's own tests and the security suite.
import { silentLogger } from "../../src/log.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { TelegramProvider, type TelegramOptions } from "../../providers/telegram/telegram.js";
import { startFakeTelegram, type FakeTelegram, type SentMessage } from "../fakes/telegram/server.js";
import { ProviderWorld } from "./provider-world.js";

export const ALICE = 1001;
export const BOB = 1002;

class TelegramWorld extends ProviderWorld<FakeTelegram, TelegramProvider> {
  constructor(private readonly files: Record<string, string>) {
    super(startFakeTelegram, "switchboard-tg-");
  }

  /** This test's fake Bot API. */
  get tg(): FakeTelegram {
    return this.platform;
  }

  /** Starts a long-polling bot on a new harness; options such as `webhook` or `apiRoot` override the defaults. */
  async boot(options: Partial<TelegramOptions> = {}, tools: Tool[] = []) {
    const h = await this.harness({ files: this.files, tools });
    const bot = new TelegramProvider(h.gateway, {
      token: this.tg.token,
      apiRoot: this.tg.url,
      allowedUsers: [],
      throttle: false,
      maxRetries: 0,
      log: silentLogger(),
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
