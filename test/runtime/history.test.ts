// The history sanitiser is the invariant checker in front of every model call. Each test plants a
// broken history, shows the strict fake API rejects it as-is, and that the sanitised one is accepted.
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/llm/types.js";
import { MISSING_RESULT, sanitise, unresolvedToolUses } from "../../src/runtime/history.js";
import { startFakeAnthropic, text, type FakeAnthropic } from "../fakes/anthropic/server.js";

let fake: FakeAnthropic;
let client: Anthropic;
beforeAll(async () => {
  fake = await startFakeAnthropic();
  fake.fallback(() => text("ok"));
  client = new Anthropic({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
});
afterAll(() => fake.close());

const tools = [{ name: "t", description: "t", input_schema: { type: "object" as const } }];
const send = (messages: ChatMessage[]) => client.messages.create({ model: "m", max_tokens: 10, messages: messages as Anthropic.MessageParam[], tools });

const user = (t: string): ChatMessage => ({ role: "user", content: [{ type: "text", text: t }] });
const use = (id: string): ChatMessage => ({ role: "assistant", content: [{ type: "tool_use", id, name: "t", input: {} }] });
const result = (id: string): ChatMessage => ({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "r" }] });

const broken: Array<[string, ChatMessage[], RegExp]> = [
  ["a tool_use without its tool_result", [user("hi"), use("a"), user("next")], /without `tool_result` blocks/],
  ["a tool_result without its tool_use", [user("hi"), { role: "assistant", content: [{ type: "text", text: "x" }] }, result("zz")], /unexpected `tool_use_id`/],
  ["an empty text block", [user("hi"), { role: "assistant", content: [{ type: "text", text: "" }] }, user("again")], /non-empty|must have non-empty content/],
  ["a first message from the assistant", [{ role: "assistant", content: [{ type: "text", text: "hello" }] }, user("hi")], /first message/],
  [
    "two results for one tool_use",
    [
      user("hi"),
      use("a"),
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "a", content: "1" },
          { type: "tool_result", tool_use_id: "a", content: "2" },
        ],
      },
    ],
    /single result/,
  ],
  [
    "text before the tool_result",
    [
      user("hi"),
      use("a"),
      {
        role: "user",
        content: [
          { type: "text", text: "and" },
          { type: "tool_result", tool_use_id: "a", content: "1" },
        ],
      },
    ],
    /must come first/,
  ],
];

describe("sanitise", () => {
  for (const [name, history, rejection] of broken) {
    it(`repairs ${name} so the strict API accepts it`, async () => {
      const error = await send(history).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Anthropic.BadRequestError);
      expect((error as Error).message).toMatch(rejection);

      const { messages, repairs } = sanitise(history);
      expect(repairs.length).toBeGreaterThan(0);
      await expect(send(messages)).resolves.toMatchObject({ type: "message" });
    });
  }

  it("fills a missing result with an error result the model can see", () => {
    const { messages } = sanitise([user("hi"), use("a"), user("next")]);
    expect(messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "a", content: MISSING_RESULT, is_error: true },
        { type: "text", text: "next" },
      ],
    });
  });

  it("leaves a valid history untouched and reports no repairs", () => {
    const history = [user("hi"), use("a"), result("a")];
    expect(sanitise(history)).toEqual({ messages: history, repairs: [] });
  });
});

describe("unresolvedToolUses", () => {
  it("returns the tool uses of the last assistant message that have no result yet", () => {
    const three: ChatMessage = {
      role: "assistant",
      content: ["1", "2", "3"].map((id) => ({ type: "tool_use" as const, id, name: "t", input: {} })),
    };
    const partly: ChatMessage = {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "1", content: "r" },
        { type: "tool_result", tool_use_id: "2", content: "r" },
      ],
    };
    expect(unresolvedToolUses([user("go"), three, partly]).map((u) => u.id)).toEqual(["3"]);
    expect(unresolvedToolUses([user("go")])).toEqual([]);
  });
});
