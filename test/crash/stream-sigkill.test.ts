// A reply SIGKILLed while it streams to Telegram. The real gateway runs as a child process (`node --import tsx
// src/main.ts`, long polling) against the fake Bot API and the strict fake Messages API, both in this process. The
// model streams a long answer and holds mid-way; once the chat shows the partial text the process is SIGKILLed and a
// new one starts on the same DATA_DIR. No step of the turn was committed, so its request is still unfinished and the
// new process runs it again (Gateway.recover at start): the model answers again, in full. What the user sees in the
// end is read from the fake's view of the chat: one answer with the whole text. A group streams by editing one
// message, which the new process takes over (its id was remembered in an indicator row) and turns into the answer;
// a private chat streams a draft, which is ephemeral, so the answer is one sendMessage. Nothing sleeps: every wait
// is for a call the fake Bot API or the fake model recorded.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { holdStream, lastUserText, startFakeAnthropic, text, type FakeAnthropic, type FakeReply, type StreamHold } from "../fakes/anthropic/server.js";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { freePort, processEnv, run, type Proc } from "../integration/child-process.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const ALICE = 1001;
const GROUP = -1001234;
const ANSWER =
  "Lisbon is lovely in May: walk the Alfama early, ride tram 28 before the crowds, eat pastries in Belem, " +
  "and end the day on a miradouro when the light turns gold over the river.";
/** The stream of the first answer holds after this many text deltas (the fake streams one word per delta). */
const HELD_AFTER = 6;
/** What the user can have seen of the answer when the process dies: its first HELD_AFTER words. */
const PARTIAL = (ANSWER.match(/\s*\S+\s*|\s+/g) ?? []).slice(0, HELD_AFTER).join("").trim();
const QUESTION = "where to in May?";

let model: FakeAnthropic;
let tg: FakeTelegram;
let defs: ReturnType<typeof writeDefinitions>;
const procs: Proc[] = [];
/** Streams the next model calls will use, in order; a call with none streams the answer straight through. */
let holds: StreamHold[] = [];

beforeEach(async () => {
  model = await startFakeAnthropic();
  tg = await startFakeTelegram();
  defs = writeDefinitions({});
  holds = [];
  model.fallback((req): FakeReply => {
    if (!lastUserText(req).includes(QUESTION)) return text("unexpected question");
    const hold = holds.shift();
    return { ...text(ANSWER), ...(hold ? { stream: hold.stream } : {}) };
  });
});

afterEach(async (ctx) => {
  // A wait that never ended shows up as a timeout: the processes' logs say where they were.
  if (ctx.task.result?.state === "fail") for (const [i, p] of procs.entries()) process.stderr.write(`--- gateway process ${i + 1} log ---\n${p.stderr}\n`);
  for (const p of procs.splice(0)) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill("SIGKILL");
  for (const h of holds) h.release();
  await tg.close();
  await model.close();
  rmSync(defs.root, { recursive: true, force: true });
});

/** A gateway process with Telegram (long polling, default streaming: drafts in private chats) on DATA_DIR. */
async function start(): Promise<Proc> {
  const proc = run(
    "src/main.ts",
    [],
    processEnv(model.url, defs, { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.url, TELEGRAM_ALLOWED_USERS: String(ALICE), HTTP_PORT: String(await freePort()) }),
  );
  procs.push(proc);
  proc.child.stdout.on("data", () => {});
  await alive(proc, proc.logged('"msg":"switchboard started"'), "starting");
  return proc;
}

/** `event`, unless the process dies first (then its log says why). */
function alive<T>(proc: Proc, event: Promise<T>, waitingFor: string): Promise<T> {
  return Promise.race([
    event,
    proc.exited.then((code): never => {
      throw new Error(`the gateway exited (${code}) while ${waitingFor}:\n${proc.stderr}`);
    }),
  ]);
}

async function sigkill(proc: Proc): Promise<void> {
  proc.child.kill("SIGKILL");
  await proc.exited;
}

/** SIGTERM: the service finishes what it is doing (turns, deliveries) and exits 0; nothing happens after. */
async function stop(proc: Proc): Promise<void> {
  proc.child.kill("SIGTERM");
  expect(await proc.exited, proc.stderr).toBe(0);
}

/** The database as the processes left it (read while no process holds it). */
async function withStore<T>(read: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = new SqliteStore(join(defs.root, "data", "switchboard.db"));
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** Every reply committed in a session, with the chunks the delivery journal recorded for it. */
function replies(sessionKey: string) {
  return withStore(async (store) => {
    const out: Array<{ text: string; kind: string; chunks: number[] }> = [];
    for (const request of await store.requests.ofSession(sessionKey)) {
      for (const reply of await store.outbox.ofRequest(request.id))
        out.push({ text: reply.text, kind: reply.kind, chunks: await store.outbox.deliveredChunks(reply.id) });
    }
    return {
      out,
      unfinished: await store.requests.unfinishedOf(sessionKey),
      pending: await store.outbox.pending(sessionKey),
      indicators: await store.indicators.list("telegram"),
    };
  });
}

/** Resolves once the first message the bot sent to `chatId` reads `words` (sent so, or edited into it). */
const shows = (chatId: number, words: string) =>
  Promise.race(["sendMessage", "editMessageText"].map((method) => tg.waitFor(method, () => tg.sent(chatId)[0]?.text === words)));

/** Resolves once the whole answer went out to `chatId`, as a new message or as an edit (the checks that follow say which). */
const answered = (chatId: number) =>
  Promise.race(["sendMessage", "editMessageText"].map((method) => tg.waitFor(method, (p) => Number(p.chat_id) === chatId && p.text === ANSWER)));

/** The model calls that answered the question: the one cut off by the kill, then the one run after the restart. */
const askedTwice = () => model.accepted().filter((r) => lastUserText(r).includes(QUESTION)).length;

describe("SIGKILL while a reply streams to Telegram", () => {
  it("a group: the new process edits the half-streamed message into the whole answer; no second copy, nothing left over", async () => {
    const first = await start();
    const hold = holdStream(HELD_AFTER);
    holds.push(hold);
    tg.userMessage({ chatId: GROUP, chatType: "supergroup", fromId: ALICE, text: `@${tg.botUsername} ${QUESTION}` });

    // The preview: a message with the first words, then (3 s later, Telegram's pace for group edits) the rest so far.
    const sent = await alive(
      first,
      tg.waitFor("sendMessage", (p) => Number(p.chat_id) === GROUP),
      "streaming the preview",
    );
    const preview = tg.sent(GROUP)[0]!;
    expect(ANSWER.startsWith(preview.text), preview.text).toBe(true);
    // The message id is remembered before "typing…" is shown again (the adapter's order), so it survives the kill.
    await alive(
      first,
      tg.waitFor("sendChatAction", () => tg.actions(GROUP).some((a) => a.seq > sent.at)),
      "remembering the preview",
    );
    await alive(first, hold.paused, "streaming");
    await alive(first, shows(GROUP, PARTIAL), "showing the partial answer");
    expect(tg.visible(GROUP).filter((m) => m.fromBot)).toEqual([{ message_id: preview.message_id, fromBot: true, text: PARTIAL }]);
    await sigkill(first);

    // What the new process finds: the request not finished, no reply committed, the half message remembered.
    const left = await replies(`telegram:${GROUP}`);
    expect(left.unfinished.map((r) => r.text)).toEqual([QUESTION]);
    expect(left.out).toEqual([]);
    expect(left.indicators).toEqual([{ sessionKey: `telegram:${GROUP}`, data: JSON.stringify({ chat: GROUP, messages: [preview.message_id] }) }]);

    const second = await start();
    await alive(second, answered(GROUP), "delivering the answer");
    await stop(second);

    // The chat: the user's question and one answer, the message that streamed, now the whole text.
    expect(tg.visible(GROUP)).toEqual([
      { message_id: 1, fromBot: false, text: `@${tg.botUsername} ${QUESTION}` },
      { message_id: preview.message_id, fromBot: true, text: ANSWER },
    ]);
    // No second copy was ever sent (then deleted), nothing was deleted, and what it showed only ever grew.
    expect(tg.sent(GROUP)).toHaveLength(1);
    const timeline = tg.timeline(GROUP);
    expect(timeline.filter((e) => e.kind === "delete")).toEqual([]);
    expect(
      timeline.every((e) => "text" in e && ANSWER.startsWith(e.text)),
      JSON.stringify(timeline),
    ).toBe(true);

    // The store agrees: one reply, delivered as chunk 0 = that message; nothing pending, nothing remembered.
    const end = await replies(`telegram:${GROUP}`);
    expect(end.out).toEqual([{ text: ANSWER, kind: "message", chunks: [0] }]);
    expect(end.unfinished).toEqual([]);
    expect(end.pending).toEqual([]);
    expect(end.indicators).toEqual([]);
    // The model answered twice (the first answer was cut off), and never saw a malformed history.
    expect(askedTwice()).toBe(2);
    expect(model.rejected()).toEqual([]);
  });

  it("a group, killed again before the resumed turn wrote a word: the third process still takes the half message over", async () => {
    const first = await start();
    const hold = holdStream(HELD_AFTER);
    holds.push(hold);
    tg.userMessage({ chatId: GROUP, chatType: "supergroup", fromId: ALICE, text: `@${tg.botUsername} ${QUESTION}` });
    await alive(first, hold.paused, "streaming");
    await alive(first, shows(GROUP, PARTIAL), "showing the partial answer");
    await sigkill(first);
    const remembered = (await replies(`telegram:${GROUP}`)).indicators;
    expect(remembered).toHaveLength(1);

    // The second process resumes the turn; the model holds before its first word, and the process dies there.
    const before = holdStream(0);
    holds.push(before);
    const second = await start();
    await alive(second, before.paused, "running the turn again");
    await sigkill(second);
    // Still remembered: nothing has taken the half message over yet.
    expect((await replies(`telegram:${GROUP}`)).indicators).toEqual(remembered);

    const third = await start();
    await alive(third, answered(GROUP), "delivering the answer");
    await stop(third);
    const preview = tg.sent(GROUP)[0]!;
    expect(tg.visible(GROUP).filter((m) => m.fromBot)).toEqual([{ message_id: preview.message_id, fromBot: true, text: ANSWER }]);
    expect(tg.sent(GROUP)).toHaveLength(1);
    const end = await replies(`telegram:${GROUP}`);
    expect(end.out).toEqual([{ text: ANSWER, kind: "message", chunks: [0] }]);
    expect(end.indicators).toEqual([]);
    expect(model.accepted().filter((r) => lastUserText(r).includes(QUESTION))).toHaveLength(3);
    expect(model.rejected()).toEqual([]);
  });

  it("a private chat: the draft is dropped with the process; the answer is sent once, whole", async () => {
    const first = await start();
    const hold = holdStream(HELD_AFTER);
    holds.push(hold);
    tg.userMessage({ chatId: ALICE, fromId: ALICE, text: QUESTION });

    await alive(first, hold.paused, "streaming");
    // Drafts go out every 300 ms at most: the newest shows everything written before the hold.
    await alive(
      first,
      tg.waitFor("sendMessageDraft", (p) => p.text === PARTIAL),
      "showing the partial answer as a draft",
    );
    expect(tg.visibleDraft(ALICE)?.text).toBe(PARTIAL);
    expect(tg.sent(ALICE)).toEqual([]);
    await sigkill(first);

    const left = await replies(`telegram:${ALICE}`);
    expect(left.unfinished.map((r) => r.text)).toEqual([QUESTION]);
    expect(left.out).toEqual([]);
    expect(left.indicators).toEqual([]); // a draft needs no taking over: it is only a preview

    const second = await start();
    await alive(second, answered(ALICE), "delivering the answer");
    await stop(second);

    // The chat: the question and exactly one answer with the whole text; the draft went with the message.
    expect(tg.visible(ALICE)).toEqual([
      { message_id: 1, fromBot: false, text: QUESTION },
      { message_id: 2, fromBot: true, text: ANSWER },
    ]);
    expect(tg.sent(ALICE).map((m) => m.text)).toEqual([ANSWER]);
    expect(tg.visibleDraft(ALICE)).toBeNull();
    // Every draft (both processes streamed one) showed a beginning of the answer, and all came before the answer.
    const drafts = tg.drafts(ALICE);
    expect(
      drafts.every((d) => ANSWER.startsWith(d.text) && d.seq < tg.sent(ALICE)[0]!.seq),
      JSON.stringify(drafts.map((d) => d.text)),
    ).toBe(true);

    const end = await replies(`telegram:${ALICE}`);
    expect(end.out).toEqual([{ text: ANSWER, kind: "message", chunks: [0] }]);
    expect(end.unfinished).toEqual([]);
    expect(end.pending).toEqual([]);
    expect(askedTwice()).toBe(2);
    expect(model.rejected()).toEqual([]);
  });
});
