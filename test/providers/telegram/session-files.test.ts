// MAX_SESSION_FILE_BYTES through the real path: a Telegram document past the conversation's total is not kept,
// the user is told the limit, and the message's text still reaches the agent.
import { describe, expect, it } from "vitest";
import { text } from "../../fakes/anthropic/server.js";
import { ALICE, useTelegramWorld } from "../../helpers/telegram-world.js";

const world = useTelegramWorld();
let nextId = 700;

function sendDocument(name: string, bytes: Buffer, caption: string): void {
  const doc = world.tg.addFile(bytes, { ext: "txt" });
  world.tg.pushUpdate({
    message: {
      message_id: nextId++,
      from: { id: ALICE, is_bot: false, first_name: "Alice" },
      chat: { id: ALICE, type: "private", first_name: "Alice" },
      date: Math.floor(Date.now() / 1000),
      caption,
      document: { file_id: doc.file_id, file_unique_id: doc.file_unique_id, file_name: name, mime_type: "text/plain", file_size: doc.file_size },
    },
  });
}

describe("a conversation's file total", () => {
  it("keeps files up to MAX_SESSION_FILE_BYTES, then names the limit; the text still goes through", async () => {
    const h = await world.boot({}, [], { maxSessionFileBytes: 1024 });
    world.model.fallback(() => text("ok"));
    sendDocument("notes.txt", Buffer.from("a".repeat(700)), "first");
    await world.tg.waitFor("sendMessage", () => world.tg.sent(ALICE).length >= 1);
    sendDocument("more.txt", Buffer.from("b".repeat(700)), "second");
    await world.tg.waitFor("sendMessage", () => world.tg.sent(ALICE).length >= 3);
    expect(world.tg.sent(ALICE).map((m) => m.text)).toEqual([
      "ok",
      `"more.txt" would take this conversation's files over 1 KB, so I did not keep it; the operator can raise MAX_SESSION_FILE_BYTES.`,
      "ok",
    ]);
    const second = world.model.accepted()[1]!.messages.at(-1)!.content as Array<{ type: string; text?: string }>;
    expect(second).toEqual([{ type: "text", text: "second" }]);
    expect(await h.h.store.files.sessionBytes(`telegram:${ALICE}`)).toBe(700);
  });
});
