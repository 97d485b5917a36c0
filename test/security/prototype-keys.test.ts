// Names that every JavaScript object already has (`constructor`, `__proto__`, `toString`) used as keys by
// outsiders: a chat command, a definition's model, a context-window setting. None may find Object.prototype.
import { afterEach, describe, expect, it } from "vitest";
import { parseCommand } from "../../src/gateway/commands.js";
import { contextLimit } from "../../src/runtime/compaction.js";
import { resolveModel } from "../../src/runtime/tools/spawn.js";
import type { StackFrame } from "../../src/runtime/frame.js";
import { lastUserText, text } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";

const NAMES = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("Object.prototype names from outside", () => {
  it.each(NAMES)("/%s is not a chat command: it reaches the model as text", async (name) => {
    expect(parseCommand(`/${name}`, true)).toBeNull();
    h = await startHarness();
    h.fake.script((req) => text(`you said ${lastUserText(req)}`));
    expect(await h.say(`/${name}`)).toEqual([`main: you said /${name}`]);
  });

  it.each(NAMES)("a definition whose model is %s keeps that name and the default context window", async (name) => {
    expect(resolveModel(name, "claude-test")).toBe(name);
    const frame = { model: name } as StackFrame;
    const limit = await contextLimit(frame, { settings: { contextTokens: { "*": 123_456 } } as never, model: { contextLimit: async () => null } as never });
    expect(limit).toBe(123_456);
  });
});
