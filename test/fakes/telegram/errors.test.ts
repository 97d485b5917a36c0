// The fake Bot API answers the real error bodies per chat, method and topic (failChat), and a group that became a
// supergroup answers for its old id with the migration error, whether a test says so (migrateChat) or the old group's
// migrate_to_chat_id service message went through the fake.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeTelegram, TG_ERRORS, type FakeTelegram } from "./server.js";

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

/** The raw HTTP answer, as Telegram would send it. */
async function call(method: string, params: Record<string, unknown>) {
  const res = await fetch(`${fake.url}/bot${fake.token}/${method}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(params),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

const USER = 1001;
const FORUM = -1002003004005;

describe("failChat", () => {
  it("answers every call naming the chat with the real body until taken back", async () => {
    fake.addChat({ id: USER, type: "private" });
    fake.failChat(USER, TG_ERRORS.blocked);
    expect(await call("sendMessage", { chat_id: USER, text: "hi" })).toEqual({
      status: 403,
      body: { ok: false, error_code: 403, description: "Forbidden: bot was blocked by the user" },
    });
    expect((await call("sendChatAction", { chat_id: String(USER), action: "typing" })).status).toBe(403);
    fake.failChat(USER, null);
    expect((await call("sendMessage", { chat_id: USER, text: "hi" })).body).toMatchObject({ ok: true });
  });

  it("can be narrowed to one method or one forum topic", async () => {
    fake.addChat({ id: FORUM, type: "supergroup", is_forum: true });
    fake.failChat(FORUM, TG_ERRORS.topicClosed, { threadId: 7 });
    fake.failChat(FORUM, TG_ERRORS.threadNotFound, { method: "sendChatAction", threadId: 9 });
    expect((await call("sendMessage", { chat_id: FORUM, message_thread_id: 7, text: "hi" })).body).toEqual({
      ok: false,
      error_code: 400,
      description: "Bad Request: TOPIC_CLOSED",
    });
    expect((await call("sendMessage", { chat_id: FORUM, message_thread_id: 8, text: "hi" })).body).toMatchObject({ ok: true });
    expect((await call("sendMessage", { chat_id: FORUM, message_thread_id: 9, text: "hi" })).body).toMatchObject({ ok: true });
    expect((await call("sendChatAction", { chat_id: FORUM, message_thread_id: 9, action: "typing" })).body).toMatchObject({
      description: "Bad Request: message thread not found",
    });
  });

  it("answers a flood wait with parameters.retry_after", async () => {
    fake.addChat({ id: USER, type: "private" });
    fake.failChat(USER, TG_ERRORS.floodWait(300), { method: "sendMessage" });
    expect(await call("sendMessage", { chat_id: USER, text: "hi" })).toEqual({
      status: 429,
      body: { ok: false, error_code: 429, description: "Too Many Requests: retry after 300", parameters: { retry_after: 300 } },
    });
  });
});

describe("group → supergroup migration", () => {
  const OLD = -4123456789;
  const NEW = -1004123456789;
  const upgraded = {
    ok: false,
    error_code: 400,
    description: "Bad Request: group chat was upgraded to a supergroup chat",
    parameters: { migrate_to_chat_id: NEW },
  };

  it("migrateChat: the old id answers with the migration error, the new supergroup takes messages", async () => {
    fake.addChat({ id: OLD, type: "group", title: "Team" });
    fake.migrateChat(OLD, NEW);
    expect(await call("sendMessage", { chat_id: OLD, text: "hi" })).toEqual({ status: 400, body: upgraded });
    expect((await call("sendMessage", { chat_id: NEW, text: "hi" })).body).toMatchObject({ ok: true, result: { chat: { id: NEW, type: "supergroup", title: "Team" } } });
  });

  it("the old group's migrate_to_chat_id service message has the same effect", async () => {
    fake.pushUpdate({
      message: { message_id: 88, from: { id: USER, is_bot: false, first_name: "A" }, chat: { id: OLD, type: "group", title: "Team" }, date: 0, migrate_to_chat_id: NEW },
    });
    expect((await call("sendMessage", { chat_id: OLD, text: "hi" })).body).toEqual(upgraded);
  });
});
