// WebSearch: the Messages API's own web search tool (WEB_SEARCH=on). The reply carries the searches and their results
// (server_tool_use / web_search_tool_result, text citing the pages); the history keeps them as they came, sends them
// back on the next call and after a restart, and the user reads the answer with its sources — through the real SDK
// and the strict fake, which checks the blocks' documented shapes.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AnthropicModel } from "../../src/llm/anthropic.js";
import { PriceTable, WEB_SEARCH_NANO_USD } from "../../src/llm/prices.js";
import type { AssistantBlock, ChatMessage } from "../../src/llm/types.js";
import { fallbackSummary } from "../../src/runtime/compaction.js";
import { sanitise } from "../../src/runtime/history.js";
import { webSearchTool } from "../../src/runtime/tools/web-search.js";
import { citedText, reply, startFakeAnthropic, text, webSearch, type FakeAnthropic, type MessagesRequest } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";

let h: Harness | undefined;
let fake: FakeAnthropic | undefined;
let dir: string | undefined;
afterEach(async () => {
  await h?.close(true);
  await fake?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  h = fake = dir = undefined;
});

const SHANNON = "https://en.wikipedia.org/wiki/Claude_Shannon";

/** The reply the web search tool page shows: a search, its results, then text split where it cites a page. */
function searchedReply(id = "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE") {
  return reply(
    text("I'll search for when Claude Shannon was born.").content[0]!,
    ...webSearch(
      "claude shannon birth date",
      [
        ["Claude Shannon - Wikipedia", SHANNON],
        ["Claude Shannon | IEEE", "https://www.ieee.org/shannon"],
      ],
      id,
    ),
    { type: "text", text: "Based on the search results, " },
    citedText(
      "Claude Shannon was born on April 30, 1916, in Petoskey, Michigan",
      SHANNON,
      "Claude Shannon - Wikipedia",
      "Claude Elwood Shannon (April 30, 1916 – February 24, 2001)",
    ),
  );
}

const assistantBlocks = (req: MessagesRequest, n: number) => req.messages[n]!.content as Array<Record<string, unknown>>;

describe("WebSearch", () => {
  it("offers the API's web search tool, shows the answer with its sources, and sends the blocks back as they came", async () => {
    h = await startHarness({ tools: [webSearchTool({ maxUses: 3 })] });
    let first: Array<Record<string, unknown>> = [];
    h.fake.script(
      (req) => {
        expect(req.tools).toContainEqual(expect.objectContaining({ type: "web_search_20250305", name: "web_search", max_uses: 3 }));
        expect((req.tools ?? []).map((t) => t.name)).not.toContain("WebSearch");
        const out = searchedReply();
        first = out.content as Array<Record<string, unknown>>;
        return out;
      },
      (req) => {
        // Replayed exactly: the encrypted content and the citation's index are what the API needs to cite again.
        expect(assistantBlocks(req, 1)).toEqual(
          first.map((b) => (b.type === "web_search_tool_result" ? { ...b, content: (b.content as object[]).map((r) => ({ ...r })) } : b)),
        );
        return text("He died in 2001.");
      },
    );
    expect(await h.say("When was Claude Shannon born?")).toEqual([
      `main: I'll search for when Claude Shannon was born.\n\nBased on the search results, Claude Shannon was born on April 30, 1916, in Petoskey, Michigan\n\nSources:\n- Claude Shannon - Wikipedia: ${SHANNON}`,
    ]);
    expect(await h.say("And when did he die?")).toEqual(["main: He died in 2001."]);
    expect(h.fake.rejected()).toEqual([]);
  });

  it("replays the search blocks from the database after a restart", async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "web-search-"));
    const options = { fake, dbFile: join(dir, "db.sqlite"), tools: [webSearchTool({ maxUses: 5 })] };
    h = await startHarness(options);
    fake.script(searchedReply("srvtoolu_restart"));
    await h.say("When was Claude Shannon born?");
    await h.close(true);
    h = await startHarness(options);
    fake.script((req) => {
      const result = assistantBlocks(req, 1).find((b) => b.type === "web_search_tool_result")!;
      expect(result.tool_use_id).toBe("srvtoolu_restart");
      expect((result.content as Array<{ url: string }>).map((r) => r.url)).toEqual([SHANNON, "https://www.ieee.org/shannon"]);
      expect(assistantBlocks(req, 1).filter((b) => b.citations)).toHaveLength(1);
      return text("Petoskey, Michigan.");
    });
    expect(await h.say("Where was that?")).toEqual(["main: Petoskey, Michigan."]);
    expect(fake.rejected()).toEqual([]);
  });

  it("continues a turn the API paused (pause_turn) by sending the reply so far back, and says one answer", async () => {
    h = await startHarness({ tools: [webSearchTool({ maxUses: 5 })] });
    h.fake.script(
      {
        ...reply(...webSearch("shannon entropy", [["Entropy (information theory)", "https://en.wikipedia.org/wiki/Entropy_(information_theory)"]], "srvtoolu_a")),
        stop_reason: "pause_turn",
      },
      (req) => {
        const last = req.messages[req.messages.length - 1]!;
        expect(last.role).toBe("assistant");
        expect((last.content as Array<{ type: string }>).map((b) => b.type)).toEqual(["server_tool_use", "web_search_tool_result"]);
        return text("Entropy measures uncertainty.");
      },
    );
    expect(await h.say("What is entropy?")).toEqual(["main: Entropy measures uncertainty."]);
    expect(h.fake.rejected()).toEqual([]);
  });

  it("says the search failed when the API answers with an error code, and the next call is still accepted", async () => {
    h = await startHarness({ tools: [webSearchTool({ maxUses: 1 })] });
    h.fake.script(reply(...webSearch("x", "max_uses_exceeded", "srvtoolu_err"), { type: "text", text: "I could not search more." }), text("ok"));
    expect(await h.say("search twice")).toEqual(["main: I could not search more."]);
    expect(await h.say("fine")).toEqual(["main: ok"]);
    expect(h.fake.rejected()).toEqual([]);
  });

  it("counts the searches of a call and prices them at USD 10 per 1000 on top of the tokens", async () => {
    fake = await startFakeAnthropic();
    const model = new AnthropicModel({ apiKey: "test-key", baseURL: fake.url, maxRetries: 0, defaultModel: "claude-test" });
    fake.script({ ...searchedReply(), usage: { input_tokens: 0, output_tokens: 0, server_tool_use: { web_search_requests: 2 } } as never });
    const response = await model.complete({
      model: "claude-test",
      system: "s",
      messages: [{ role: "user", content: [{ type: "text", text: "q" }] }],
      tools: [webSearchTool({ maxUses: 5 }).server!],
    });
    expect(response.usage.webSearchRequests).toBe(2);
    expect(response.usage.costNanoUsd).toBe(2 * WEB_SEARCH_NANO_USD);
    expect(response.content.map((b) => b.type)).toEqual(["text", "server_tool_use", "web_search_tool_result", "text", "text"]);
    expect(new PriceTable().costNanoUsd("claude-sonnet-4-5", { inputTokens: 0, outputTokens: 0, webSearchRequests: 1 })).toBe(10_000_000);
  });
});

describe("search blocks in the history", () => {
  const call: AssistantBlock = { type: "server_tool_use", id: "srvtoolu_x", name: "web_search", input: { query: "q" } };
  const result: AssistantBlock = {
    type: "web_search_tool_result",
    tool_use_id: "srvtoolu_x",
    content: [{ type: "web_search_result", url: "https://a.example/", title: "A", encrypted_content: "e" }],
  };

  it("drops a search call without its result before sending (the API refuses it), but keeps a paused last message as it is", () => {
    const history: ChatMessage[] = [
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [call, { type: "text", text: "cut short" }] },
      { role: "user", content: [{ type: "text", text: "again" }] },
      { role: "assistant", content: [call] },
    ];
    const { messages, repairs } = sanitise(history);
    expect(messages[1]!.content).toEqual([{ type: "text", text: "cut short" }]);
    expect(messages[3]!.content).toEqual([call]);
    expect(repairs).toEqual(["dropped a web search call or result without its pair"]);
    expect(sanitise([history[0]!, { role: "assistant", content: [call, result] }, history[2]!]).repairs).toEqual([]);
  });

  it("keeps the search and its pages in a compaction's summary", () => {
    const summary = fallbackSummary([
      { role: "user", content: [{ type: "text", text: "q" }] },
      { role: "assistant", content: [call, result] },
    ]);
    expect(summary).toContain("web_search: Search results: A <https://a.example/>");
  });
});
