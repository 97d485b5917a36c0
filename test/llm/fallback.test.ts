// The resilient model against the strict fake Messages API with the real SDK: failures as the API documents them
// (529 overloaded_error, 429 rate_limit_error with retry-after, 500 api_error, a dropped connection, no answer) move
// a call along its chain of models, the breaker rests a model that keeps failing, and a stream that failed halfway
// is taken back before the next model's answer streams. Waits happen in virtual time: nothing sleeps.
import { getEventListeners } from "node:events";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { BreakerState } from "../../src/llm/breaker.js";
import { ModelError } from "../../src/llm/model.js";
import { PriceTable } from "../../src/llm/prices.js";
import { createApiModel, type ResilienceObserver } from "../../src/llm/resilient.js";
import type { ModelRequest } from "../../src/llm/types.js";
import { silentLogger } from "../../src/log.js";
import { overloaded, rateLimited, serverError, startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { virtualTime } from "../helpers/virtual-time.js";

const SONNET = "claude-sonnet-5-5";
const HAIKU = "claude-haiku-5-5";
const OPUS = "claude-opus-5-5";
const OLD_HAIKU = "claude-3-5-haiku";
const TIMEOUT = 600_000;

let fake: FakeAnthropic;
beforeEach(async () => {
  fake = await startFakeAnthropic();
});
afterEach(async () => {
  await fake.close();
});

function events() {
  const seen: Array<{ fallback: [string, string, string] } | { breaker: [string, BreakerState] } | { key: string }> = [];
  const observer: ResilienceObserver = {
    fallback: (from, to, reason) => void seen.push({ fallback: [from, to, reason] }),
    breaker: (model, state) => void seen.push({ breaker: [model, state] }),
    key: (event) => void seen.push({ key: event }),
  };
  return { seen, observer };
}

function model(options: { fallbacks?: string[]; retries?: number; failures?: number; cooldownMs?: number; keys?: string[] } = {}) {
  const time = virtualTime();
  const { seen, observer } = events();
  const api = createApiModel({
    keys: options.keys ?? ["sk-ant-test-key"],
    baseURL: fake.url,
    defaultModel: SONNET,
    retries: options.retries ?? 2,
    fallbacks: options.fallbacks ?? [],
    breaker: { failures: options.failures ?? 5, cooldownMs: options.cooldownMs ?? 30_000 },
    callTimeoutMs: TIMEOUT,
    now: time.now,
    timers: time.timers,
    random: () => 0,
    log: silentLogger(),
    observer,
  });
  return { api, time, seen };
}

const ask = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: SONNET,
  system: "",
  messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }],
  tools: [],
  ...extra,
});
const models = () => fake.accepted().map((b) => b.model);
const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.fail("expected the call to fail"),
    (error: unknown) => error as ModelError,
  );

describe("fallback models", () => {
  it("a 529 goes on at once to the next model, whose answer comes back named and priced as that model's", async () => {
    const { api, time, seen } = model({ fallbacks: [HAIKU, OPUS] });
    fake.script(overloaded(), { ...text("from haiku"), usage: { input_tokens: 1000, output_tokens: 100 } });
    const response = await api.complete(ask());
    expect(models()).toEqual([SONNET, HAIKU]);
    expect(response.model).toBe(HAIKU);
    expect(response.content).toEqual([{ type: "text", text: "from haiku" }]);
    expect(response.usage.costNanoUsd).toBe(new PriceTable().costNanoUsd(HAIKU, { inputTokens: 1000, outputTokens: 100 }));
    expect(response.usage.costNanoUsd).not.toBe(new PriceTable().costNanoUsd(SONNET, { inputTokens: 1000, outputTokens: 100 }));
    expect(time.waited).toEqual([]);
    expect(seen).toEqual([{ fallback: [SONNET, HAIKU, "overloaded"] }]);
  });

  it("a 429 waits its retry-after on the same model until the retries are spent, then goes to the next model", async () => {
    const { api, time, seen } = model({ fallbacks: [HAIKU], retries: 2 });
    fake.script(rateLimited(2), rateLimited(3), rateLimited(1), text("from haiku"));
    expect((await api.complete(ask())).model).toBe(HAIKU);
    expect(models()).toEqual([SONNET, SONNET, SONNET, HAIKU]);
    expect(time.waited).toEqual([2000, 3000]);
    expect(seen).toEqual([{ key: "rate_limited" }, { key: "rate_limited" }, { key: "rate_limited" }, { fallback: [SONNET, HAIKU, "rate_limited"] }]);
  });

  it("a 500, a connection dropped before the answer and a model that never answers each move the call to the next model", async () => {
    const { api, time } = model({ fallbacks: [HAIKU, OPUS, OLD_HAIKU] });
    fake.script(serverError(), { drop: true }, { hang: true }, text("from the fourth"));
    const answer = api.complete(ask());
    while (fake.calls.length < 3) await new Promise((resolve) => setImmediate(resolve));
    time.fireHeld(); // MODEL_CALL_TIMEOUT passes for the third model
    expect((await answer).model).toBe(OLD_HAIKU);
    expect(models()).toEqual([SONNET, HAIKU, OPUS, OLD_HAIKU]);
  });

  it("the last model is tried again with backoff; when none answers, the error names what each said", async () => {
    const { api, time } = model({ fallbacks: [HAIKU], retries: 1 });
    fake.script(overloaded(), overloaded(), serverError());
    const error = await failure(api.complete(ask()));
    expect(models()).toEqual([SONNET, HAIKU, HAIKU]);
    expect(time.waited).toEqual([500]);
    expect(error.message).toBe(`no model could answer (${SONNET}: Anthropic API error 529: Overloaded; ${HAIKU}: Anthropic API error 500: Internal server error)`);
    expect(error.failure).toBe("server");
  });

  it("one model alone keeps the API's own words, after the same retries the SDK would make", async () => {
    const { api, time } = model({ retries: 2 });
    fake.script(overloaded(), overloaded(), overloaded());
    const error = await failure(api.complete(ask()));
    expect(error.message).toBe("Anthropic API error 529: Overloaded");
    expect(error.status).toBe(529);
    expect(time.waited).toEqual([500, 1000]);
  });

  it("a request that is wrong as it is (400) is not tried on another model", async () => {
    const { api } = model({ fallbacks: [HAIKU] });
    const error = await failure(api.complete(ask({ messages: [] })));
    expect(error.status).toBe(400);
    expect(models()).toEqual([]);
    expect(fake.rejected()).toHaveLength(1);
  });

  it("a definition's own list of fallbacks takes the place of MODEL_FALLBACKS", async () => {
    const { api } = model({ fallbacks: [HAIKU] });
    fake.script(overloaded(), text("old haiku"));
    expect((await api.complete(ask({ fallbackModels: [OLD_HAIKU] }))).model).toBe(OLD_HAIKU);
    expect(models()).toEqual([SONNET, OLD_HAIKU]);
    fake.script(overloaded(), overloaded(), overloaded());
    await failure(api.complete(ask({ fallbackModels: [] }))); // none: the model alone, with its retries
    expect(models().slice(2)).toEqual([SONNET, SONNET, SONNET]);
  });

  it("a cancelled call stops at once, without trying another model", async () => {
    const { api } = model({ fallbacks: [HAIKU] });
    fake.script({ hang: true });
    const stop = new AbortController();
    const call = failure(api.complete(ask({ signal: stop.signal })));
    while (fake.calls.length < 1) await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    expect((await call).failure).toBe("cancelled");
    expect(models()).toEqual([SONNET]);
  });

  it("each try stops following the caller's signal when it ends, so a long request's signal gathers no listeners", async () => {
    const { api } = model({ fallbacks: [HAIKU] });
    const stop = new AbortController();
    for (let i = 0; i < 3; i++) {
      fake.script(overloaded(), text(`answer ${i}`));
      await api.complete(ask({ signal: stop.signal }));
    }
    expect(models()).toEqual([SONNET, HAIKU, SONNET, HAIKU, SONNET, HAIKU]);
    expect(getEventListeners(stop.signal, "abort")).toEqual([]);
  });

  it("a call whose signal is already aborted asks no model", async () => {
    const { api } = model({ fallbacks: [HAIKU] });
    const stop = new AbortController();
    stop.abort();
    expect((await failure(api.complete(ask({ signal: stop.signal })))).failure).toBe("cancelled");
    expect(fake.calls).toEqual([]);
  });
});

describe("circuit breaker", () => {
  it("a model that failed N times in a row rests: calls skip it for the cooldown, then the next call tries it again", async () => {
    const { api, time, seen } = model({ fallbacks: [HAIKU], failures: 2, cooldownMs: 30_000 });
    fake.script(overloaded(), text("h1"), overloaded(), text("h2"), text("h3"));
    await api.complete(ask());
    await api.complete(ask());
    expect(seen).toContainEqual({ breaker: [SONNET, "open"] });
    expect((await api.complete(ask())).model).toBe(HAIKU);
    expect(models()).toEqual([SONNET, HAIKU, SONNET, HAIKU, HAIKU]); // the third call did not try sonnet
    expect(seen.at(-1)).toEqual({ fallback: [SONNET, HAIKU, "resting"] });

    time.advance(30_000);
    fake.script(text("sonnet is back"));
    expect((await api.complete(ask())).model).toBe(SONNET);
    expect(seen.filter((e) => "breaker" in e)).toEqual([{ breaker: [SONNET, "open"] }, { breaker: [SONNET, "half_open"] }, { breaker: [SONNET, "closed"] }]);
  });

  it("a model tried again after its rest that fails again rests again at once", async () => {
    const { api, time, seen } = model({ fallbacks: [HAIKU], failures: 1, cooldownMs: 10_000 });
    fake.script(overloaded(), text("h1"));
    await api.complete(ask());
    time.advance(10_000);
    fake.script(serverError(), text("h2"), text("h3"));
    await api.complete(ask());
    await api.complete(ask());
    expect(models()).toEqual([SONNET, HAIKU, SONNET, HAIKU, HAIKU]);
    expect(seen.filter((e) => "breaker" in e).map((e) => (e as { breaker: unknown[] }).breaker[1])).toEqual(["open", "half_open", "open"]);
  });

  it("when every model of the call rests, it fails at once and says when to try again", async () => {
    const { api } = model({ fallbacks: [HAIKU], failures: 1, cooldownMs: 45_000, retries: 0 });
    fake.script(overloaded(), overloaded());
    await failure(api.complete(ask()));
    const calls = fake.calls.length;
    const error = await failure(api.complete(ask()));
    expect(fake.calls.length).toBe(calls);
    expect(error.failure).toBe("unavailable");
    expect(error.message).toBe(`${SONNET}, ${HAIKU} are resting after repeated failures; try again in 45 s`);
  });

  it("a model that asked to wait (retry-after) is passed over while another can answer now", async () => {
    const { api } = model({ fallbacks: [HAIKU], retries: 0 });
    fake.script(rateLimited(20), text("h1"), text("h2"));
    await api.complete(ask());
    expect((await api.complete(ask())).model).toBe(HAIKU);
    expect(models()).toEqual([SONNET, HAIKU, HAIKU]);
  });
});

describe("a stream that fails halfway", () => {
  for (const [how, failWith] of [
    ["drops its connection", "disconnect"],
    ["ends in an overloaded_error event", undefined],
    ["ends in an api_error event", { type: "api_error", message: "Internal server error" }],
  ] as const) {
    it(`${how}: the streamed text is taken back, then the next model's answer streams from its beginning`, async () => {
      const { api } = model({ fallbacks: [HAIKU] });
      fake.script({ ...text("one two three"), stream: { failAfterDeltas: 2, ...(failWith ? { failWith } : {}) } }, text("four five"));
      const shown: string[] = [];
      const response = await api.complete(ask({ onText: (d) => void shown.push(d), onReset: () => void shown.push("⟲") }));
      expect(shown).toEqual(["one ", "two ", "⟲", "four ", "five"]);
      expect(response.content).toEqual([{ type: "text", text: "four five" }]);
      expect(models()).toEqual([SONNET, HAIKU]);
    });
  }

  it("a stream that stops bringing text for MODEL_CALL_TIMEOUT is given up and taken back", async () => {
    const { api, time } = model({ fallbacks: [HAIKU] });
    fake.script({ ...text("one two three"), stream: { pauseAfterDeltas: 1 } }, text("four"));
    const shown: string[] = [];
    const answer = api.complete(ask({ onText: (d) => void shown.push(d), onReset: () => void shown.push("⟲") }));
    while (shown.length < 1) await new Promise((resolve) => setImmediate(resolve));
    time.fireHeld();
    expect((await answer).model).toBe(HAIKU);
    expect(shown).toEqual(["one ", "⟲", "four"]);
  });
});

describe("several API keys", () => {
  const KEY_1 = "sk-ant-api03-first-0000000000000000";
  const KEY_2 = "sk-ant-api03-second-000000000000000";
  const keysUsed = () => fake.calls.map((c) => String(c.headers["x-api-key"] ?? c.headers.authorization).replace(/^Bearer /, ""));

  it("a 429 on one key goes on at once with the next; the first is used again once its retry-after has passed", async () => {
    const { api, time } = model({ keys: [KEY_1, KEY_2] });
    fake.fallback((_req, call) => (call.apiKey === KEY_1 ? rateLimited(30) : text("via 2")));
    expect((await api.complete(ask())).content).toEqual([{ type: "text", text: "via 2" }]);
    expect(await api.complete(ask())).toMatchObject({ content: [{ text: "via 2" }] }); // stays on the second key
    expect(keysUsed()).toEqual([KEY_1, KEY_2, KEY_2]);
    expect(time.waited).toEqual([]);

    time.advance(30_000);
    fake.fallback((_req, call) => (call.apiKey === KEY_2 ? rateLimited(30) : text("via 1")));
    expect(await api.complete(ask())).toMatchObject({ content: [{ text: "via 1" }] });
    expect(keysUsed().slice(3)).toEqual([KEY_2, KEY_1]);
  });

  it("when every key is rate limited, the call waits for the first to be free again", async () => {
    const { api, time } = model({ keys: [KEY_1, KEY_2] });
    fake.script(rateLimited(10), rateLimited(4), text("after the wait"));
    expect(await api.complete(ask())).toMatchObject({ content: [{ text: "after the wait" }] });
    expect(time.waited).toEqual([4000]);
    expect(keysUsed()).toEqual([KEY_1, KEY_2, KEY_2]);
  });

  it("a key answering 401 is taken out of use and logged once, by its place and fingerprint, never its value", async () => {
    const lines: string[] = [];
    const { createLogger } = await import("../../src/log.js");
    const time = virtualTime();
    const api = createApiModel({
      keys: [KEY_1, KEY_2],
      baseURL: fake.url,
      defaultModel: SONNET,
      retries: 0,
      fallbacks: [],
      breaker: { failures: 5, cooldownMs: 1000 },
      callTimeoutMs: TIMEOUT,
      now: time.now,
      timers: time.timers,
      log: createLogger("debug", { write: (line: string) => void lines.push(line) }),
    });
    fake.revokeKey(KEY_1);
    fake.fallback(() => text("ok"));
    await api.complete(ask());
    await api.complete(ask());
    await api.complete(ask());
    expect(keysUsed()).toEqual([KEY_1, KEY_2, KEY_2, KEY_2]);
    const refused = lines.filter((l) => l.includes("was refused (401)"));
    expect(refused).toHaveLength(1);
    expect(JSON.parse(refused[0]!)).toMatchObject({ level: 50, key: 1, msg: expect.stringContaining("API key 1 (fingerprint ") });
    expect(lines.join("")).not.toContain("first-0000");
  });

  it("every key refused: the call fails at once, saying to set a valid key", async () => {
    const { api } = model({ keys: [KEY_1, KEY_2], fallbacks: [HAIKU] });
    fake.revokeKey(KEY_1);
    fake.revokeKey(KEY_2);
    const error = await failure(api.complete(ask()));
    expect(error.failure).toBe("auth");
    expect(error.message).toContain("every configured API key was refused by the Anthropic API (401 authentication_error)");
    expect(fake.calls).toHaveLength(2); // no fallback model tried: the keys are the trouble
    await failure(api.complete(ask()));
    expect(fake.calls).toHaveLength(2);
  });
});
