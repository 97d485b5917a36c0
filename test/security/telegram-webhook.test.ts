// Telegram webhook mode under hostile or broken conditions: the real TelegramProvider (grammY) serving real HTTP,
// talking to the Bot API fake through a gate that can hold a method's calls (a Bot API that hangs), the real
// gateway and runtime behind it. The webhook must validate, store and answer at once, and never throw.
import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log.js";
import type { TelegramOptions } from "../../providers/telegram/telegram.js";
import { lastUserText, text } from "../fakes/anthropic/server.js";
import { ALICE, BOB, useTelegramWorld } from "../helpers/telegram-world.js";

const SECRET = "webhook-secret-0123456789";
const PATH = "/tg/hook";
const NOT_ALLOWED = "Sorry, this bot is private and you are not on its list of users.";

const world = useTelegramWorld();
let gate: Gate;
let logs: string[];

beforeEach(async () => {
  gate = await startGate(world.tg.url);
  logs = [];
});
// vitest runs after-hooks in reverse order, so this comes before the world's teardown: held calls go through and
// the bots stop while the gate still forwards, and only then does the gate close.
afterEach(async () => {
  gate.release();
  await world.stopProviders();
  await gate.close();
});

/**
 * A pass-through proxy in front of the Bot API fake that can hold every call of some methods until released,
 * which is what a Bot API that does not answer looks like to the bot.
 */
interface Gate {
  url: string;
  hold(method: string): void;
  release(): void;
  /** Resolves once a held call of `method` for `chatId` has arrived. */
  holding(method: string, chatId: number): Promise<void>;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function startGate(target: string): Promise<Gate> {
  const held = new Set<string>();
  let parked: Array<() => void> = [];
  let seen: Array<{ method: string; chatId: number }> = [];
  let waiters: Array<{ method: string; chatId: number; resolve: () => void }> = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const forward = async () => {
        const answer = await fetch(`${target}${req.url}`, {
          method: "POST",
          headers: { "content-type": req.headers["content-type"] ?? "application/json" },
          body,
        });
        res.writeHead(answer.status, { "content-type": "application/json" }).end(Buffer.from(await answer.arrayBuffer()));
      };
      const method = (req.url ?? "").split("/").pop()!.toLowerCase();
      if (!held.has(method)) return forward();
      const chatId = Number((JSON.parse(body.toString() || "{}") as { chat_id?: unknown }).chat_id);
      parked.push(() => void forward());
      seen.push({ method, chatId });
      waiters = waiters.filter((w) => (w.method === method && w.chatId === chatId ? (w.resolve(), false) : true));
    })().catch((error: unknown) => res.writeHead(502).end(String(error)));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold: (method) => void held.add(method.toLowerCase()),
    release: () => {
      held.clear();
      const calls = parked;
      parked = [];
      calls.forEach((call) => call());
    },
    holding: (method, chatId) => {
      const m = method.toLowerCase();
      if (seen.some((s) => s.method === m && s.chatId === chatId)) return Promise.resolve();
      return new Promise((resolve) => waiters.push({ method: m, chatId, resolve }));
    },
    close: () => {
      seen = [];
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function boot(options: Partial<TelegramOptions> = {}) {
  const { h, bot } = await world.boot({
    apiRoot: gate.url,
    log: createLogger("debug", { write: (line: string) => void logs.push(line) }),
    webhook: { url: `https://bot.example.com${PATH}`, secret: SECRET, port: 0 },
    ...options,
  });
  return { h, bot, port: bot.webhookPort()! };
}

let nextUpdateId = 100;
function message(fromId: number, fields: Record<string, unknown>) {
  world.tg.addChat({ id: fromId, type: "private" });
  const id = nextUpdateId++;
  return {
    update_id: id,
    message: { message_id: id, date: 0, chat: { id: fromId, type: "private" }, from: { id: fromId, is_bot: false, first_name: `U${fromId}` }, ...fields },
  };
}

/** A POST to the webhook; a response that does not come within seconds fails the test instead of hanging it. */
function post(port: number, body: string | object, headers: Record<string, string> = {}, path = PATH, method = "POST") {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET, ...headers },
    ...(method === "GET" ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    signal: AbortSignal.timeout(5000),
  });
}

const rejections = () => logs.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === "telegram webhook request rejected");

describe("telegram webhook: bad requests", () => {
  it("answers a body that is not a JSON update with 400, logs it, and serves the next update", async () => {
    const { port } = await boot();
    const bad = await post(port, "{not json");
    expect(bad.status).toBe(400);
    expect(await bad.text()).toMatch(/not JSON/);
    expect((await post(port, "[1,2]")).status).toBe(400);
    expect((await post(port, { message: {} })).status).toBe(400);
    expect((await post(port, { update_id: "7" })).status).toBe(400);
    expect(rejections().map((r) => r.status)).toEqual([400, 400, 400, 400]);

    world.model.script(text("still here"));
    expect((await post(port, message(ALICE, { text: "hi" }))).status).toBe(200);
    expect((await world.nth(ALICE, 1)).text).toBe("still here");
  });

  it("answers a missing or wrong secret with 401 and never logs what was sent", async () => {
    const { h, port } = await boot();
    const update = message(ALICE, { text: "hi" });
    const wrong = await post(port, update, { "x-telegram-bot-api-secret-token": "guessed-secret-value" });
    expect(wrong.status).toBe(401);
    const missing = await fetch(`http://127.0.0.1:${port}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(update),
      signal: AbortSignal.timeout(5000),
    });
    expect(missing.status).toBe(401);
    expect(rejections().map((r) => r.status)).toEqual([401, 401]);
    expect(logs.join("")).not.toContain("guessed-secret-value");
    expect(logs.join("")).not.toContain(SECRET);
    expect(await h.store.requests.ofSession(`telegram:${ALICE}`)).toEqual([]);
  });

  it("answers another path with 404 and another method with 405", async () => {
    const { port } = await boot();
    const elsewhere = await post(port, message(ALICE, { text: "hi" }), {}, "/somewhere-else");
    expect(elsewhere.status).toBe(404);
    const get = await post(port, "", {}, PATH, "GET");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
    expect(rejections().map((r) => r.status)).toEqual([404, 405]);
  });

  it("answers a body over 1 MB with 413, declared or streamed, and one that is not JSON by type with 415", async () => {
    const { h, port } = await boot();
    const huge = { ...message(ALICE, { text: "hi" }), padding: "x".repeat(1024 * 1024) };
    const declared = await post(port, huge);
    expect(declared.status).toBe(413);

    // Chunked, without a Content-Length: the cap holds while the body arrives.
    const streamed = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port, path: PATH, method: "POST", headers: { "content-type": "application/json", "x-telegram-bot-api-secret-token": SECRET } },
        (res) => {
          res.resume();
          resolve(res.statusCode!);
        },
      );
      req.on("error", reject);
      const chunk = "x".repeat(64 * 1024);
      let sent = 0;
      const pump = () => {
        while (sent < 40) {
          sent++;
          if (!req.write(chunk)) return void req.once("drain", pump);
        }
        req.end();
      };
      req.write('{"update_id":1,"padding":"');
      pump();
    });
    expect(streamed).toBe(413);

    const typed = await post(port, message(ALICE, { text: "hi" }), { "content-type": "text/plain" });
    expect(typed.status).toBe(415);
    expect(rejections().map((r) => r.status)).toEqual([413, 413, 415]);
    expect(await h.store.requests.ofSession(`telegram:${ALICE}`)).toEqual([]);

    world.model.script(text("fine after all that"));
    expect((await post(port, message(ALICE, { text: "hi" }))).status).toBe(200);
    expect((await world.nth(ALICE, 1)).text).toBe("fine after all that");
  });
});

describe("telegram webhook: a failing handler", () => {
  it("answers 200, logs the failure with the update id, and serves the next update", async () => {
    const { h, port } = await boot();
    const submit = h.gateway.submit.bind(h.gateway);
    let failures = 1;
    h.gateway.submit = async (input) => {
      if (failures-- > 0) throw new Error("the store is failing");
      return submit(input);
    };
    const broken = message(ALICE, { text: "first" });
    expect((await post(port, broken)).status).toBe(200);
    const failed = logs.map((l) => JSON.parse(l) as { msg: string; update?: number; err?: { message: string } }).find((l) => l.msg === "telegram update failed");
    expect(failed).toMatchObject({ update: broken.update_id, err: { message: "the store is failing" } });

    world.model.script(text("second one works"));
    expect((await post(port, message(ALICE, { text: "second" }))).status).toBe(200);
    expect((await world.nth(ALICE, 1)).text).toBe("second one works");
  });
});

describe("telegram webhook: a Bot API that does not answer", () => {
  it("answers 200 at once, with the update stored, while the Bot API hangs; replies follow from the outbox", async () => {
    const { h, port } = await boot();
    gate.hold("sendMessage");
    // A sticker: the "text only" notice needs sendMessage, which hangs.
    expect(
      (await post(port, message(ALICE, { sticker: { file_id: "f", file_unique_id: "u", type: "regular", width: 1, height: 1, is_animated: false, is_video: false } })))
        .status,
    ).toBe(200);
    world.model.script((req) => text(`answered: ${lastUserText(req)}`));
    expect((await post(port, message(ALICE, { text: "are you there?" }))).status).toBe(200);
    // Stored before the 200, not merely on its way.
    expect((await h.store.requests.ofSession(`telegram:${ALICE}`)).map((r) => r.text)).toEqual(["are you there?"]);
    await gate.holding("sendMessage", ALICE);
    expect(world.tg.sent(ALICE)).toEqual([]);

    gate.release();
    expect((await world.nth(ALICE, 1)).text).toBe("I can't read stickers. Send text, photos, documents, voice notes, audio or video instead.");
    expect((await world.nth(ALICE, 2)).text).toBe("answered: are you there?");
  });

  it("answers a stranger's message with 200 at once; the refusal is committed to the outbox and sent later", async () => {
    const { h, port } = await boot({ allowedUsers: [String(ALICE)] });
    gate.hold("sendMessage");
    expect((await post(port, message(BOB, { text: "let me in" }))).status).toBe(200);
    // The refusal is a row of the delivery journal, whatever the Bot API does with it.
    const outbox = new Database(h.dbFile, { readonly: true });
    try {
      const rows = outbox.prepare("SELECT text, kind FROM outbox WHERE session_key = ?").all(`telegram:${BOB}`);
      expect(rows).toEqual([{ text: NOT_ALLOWED, kind: "notice" }]);
    } finally {
      outbox.close();
    }
    await gate.holding("sendMessage", BOB);
    expect(world.tg.sent(BOB)).toEqual([]);

    gate.release();
    expect((await world.nth(BOB, 1)).text).toBe(NOT_ALLOWED);
    expect(await h.store.requests.ofSession(`telegram:${BOB}`)).toEqual([]);
    expect(world.model.calls).toHaveLength(0);
  });
});
