import type { Message } from "grammy/types";
import type { Timers } from "../../src/runtime/deps.js";

// Telegram sends an album as one update per photo or document, sharing a `media_group_id`, with no sign of which
// is the last. The parts are gathered until no new one has come for ALBUM_WAIT_MS, then handled as one message.
// The handler of each part returns at once (grammY's per-chat order would otherwise hold the next part behind it).

/** How long after an album's latest part it is taken as complete (Telegram sends the parts within a second). */
export const ALBUM_WAIT_MS = 1_500;

export class Albums {
  private readonly open = new Map<string, { parts: Message[]; timer: unknown }>();
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly timers: Timers,
    private readonly complete: (parts: Message[]) => Promise<void>,
    private readonly waitMs = ALBUM_WAIT_MS,
  ) {}

  add(message: Message): void {
    const key = `${message.chat.id}:${message.media_group_id}`;
    const album = this.open.get(key) ?? { parts: [], timer: null };
    if (album.timer !== null) this.timers.clearTimeout(album.timer);
    // A redelivered part (after a restart) is the same part.
    if (!album.parts.some((p) => p.message_id === message.message_id)) album.parts.push(message);
    album.timer = this.timers.setTimeout(() => this.finish(key), this.waitMs);
    this.open.set(key, album);
  }

  /** Handles every open album now (on stop) and waits for all of them. */
  async flush(): Promise<void> {
    for (const [key, album] of [...this.open]) {
      this.timers.clearTimeout(album.timer);
      this.finish(key);
    }
    await Promise.allSettled([...this.running]);
  }

  private finish(key: string): void {
    const album = this.open.get(key);
    if (!album) return;
    this.open.delete(key);
    const parts = album.parts.sort((a, b) => a.message_id - b.message_id);
    const work = this.complete(parts).catch(() => {});
    this.running.add(work);
    void work.finally(() => this.running.delete(work));
  }
}
