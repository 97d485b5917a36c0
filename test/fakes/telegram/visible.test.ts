// The fake's view of a chat as its members see it: messages in order, deleted ones gone, edits applied in place,
// drafts beside them rather than among them.
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { startFakeTelegram, type FakeTelegram } from "./server.js";

let fake: FakeTelegram;

beforeAll(async () => {
  fake = await startFakeTelegram();
});
afterAll(async () => {
  await fake.close();
});
beforeEach(() => {
  fake.reset();
});

async function call(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
  const res = await fetch(`${fake.url}/bot${fake.token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(params),
  });
  const body = (await res.json()) as { ok: boolean; result?: Record<string, unknown>; description?: string };
  if (!body.ok) throw new Error(`${method}: ${body.description}`);
  return body.result ?? {};
}

const GROUP = -1001234;
const USER = 1001;

it("shows the users' and the bot's messages in order, without deleted ones, with edits applied in place", async () => {
  fake.userMessage({ chatId: GROUP, chatType: "supergroup", fromId: USER, text: "hello" });
  const half = (await call("sendMessage", { chat_id: GROUP, text: "Lisbon is" })).message_id;
  const gone = (await call("sendMessage", { chat_id: GROUP, text: "a second copy" })).message_id;
  await call("editMessageText", { chat_id: GROUP, message_id: half, text: "Lisbon is lovely." });
  await call("deleteMessage", { chat_id: GROUP, message_id: gone });

  expect(fake.visible(GROUP)).toEqual([
    { message_id: 1, fromBot: false, text: "hello" },
    { message_id: half, fromBot: true, text: "Lisbon is lovely." },
  ]);
  expect(fake.visible(999)).toEqual([]);
});

it("keeps drafts out of the messages, and filters by forum topic", async () => {
  fake.userMessage({ chatId: USER, fromId: USER, text: "hi" });
  await call("sendMessageDraft", { chat_id: USER, draft_id: 1, text: "Thinking about it" });
  expect(fake.visible(USER).map((m) => m.text)).toEqual(["hi"]);

  fake.userMessage({ chatId: GROUP, isForum: true, threadId: 7, fromId: USER, text: "in topic 7" });
  await call("sendMessage", { chat_id: GROUP, message_thread_id: 7, text: "answer in 7" });
  await call("sendMessage", { chat_id: GROUP, text: "in General" });
  expect(fake.visible(GROUP, 7).map((m) => [m.text, m.message_thread_id])).toEqual([
    ["in topic 7", 7],
    ["answer in 7", 7],
  ]);
});
