// Tool results in the shapes the MCP specification (2025-06-18, "Tool Result") gives: text, image, audio, resource
// links, embedded resources, structuredContent and isError; what the model gets for each, and the byte limit.
import { describe, expect, it } from "vitest";
import { adaptTool, mcpApprovalTarget } from "../../src/mcp/adapter.js";
import { vetTools } from "../../src/mcp/listing.js";
import { toolNameFor } from "../../src/mcp/names.js";
import { bound, readResult } from "../../src/mcp/result.js";
import { toToolOutput } from "../../src/mcp/tool-output.js";

// The spec's tiny example PNG header, padded: enough for the type check.
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(1200)]).toString("base64");
const show = (raw: unknown, max = 100_000) => toToolOutput(bound(readResult(raw as never), max));

describe("tool results", () => {
  it("text, images, audio and resources become the model's text", async () => {
    const output = await show({
      content: [
        { type: "text", text: "Found 2 files" },
        { type: "image", data: PNG, mimeType: "image/png" },
        { type: "resource_link", uri: "file:///project/src/main.rs", name: "main.rs", description: "Primary entry point", mimeType: "text/x-rust" },
        { type: "resource", resource: { uri: "file:///project/README.md", mimeType: "text/markdown", text: "# Project" } },
        { type: "resource", resource: { uri: "file:///project/logo.bin", mimeType: "application/octet-stream", blob: "AAAA" } },
        { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
      ],
    });
    expect(output).toEqual({
      content: [
        "Found 2 files",
        "[image: image/png, 1.2 KB]",
        "[resource link: file:///project/src/main.rs (main.rs, text/x-rust) Primary entry point]",
        "[resource: file:///project/README.md (text/markdown)]\n# Project",
        "[resource: file:///project/logo.bin (application/octet-stream), 3 B of binary content, not shown]",
        "[audio (audio/wav, 4 B) not shown: the model cannot listen to it here]",
      ].join("\n"),
    });
  });

  it("structuredContent is shown as JSON only when the result has no text of its own", async () => {
    expect((await show({ content: [{ type: "text", text: '{"b": 2, "a": 1}' }], structuredContent: { a: 1, b: 2 } })).content).toBe('{"b": 2, "a": 1}');
    // server-filesystem's read_text_file: its text, and the same as {content}.
    expect((await show({ content: [{ type: "text", text: "buy milk" }], structuredContent: { content: "buy milk" } })).content).toBe("buy milk");
    expect((await show({ content: [], structuredContent: { temperature: 22.5 } })).content).toBe('{"temperature":22.5}');
  });

  it("isError becomes an error result; an empty result says so", async () => {
    expect(await show({ content: [{ type: "text", text: "rate limited" }], isError: true })).toEqual({ content: "rate limited", isError: true });
    expect(await show({ content: [] })).toEqual({ content: "(the tool returned no content)" });
  });

  it("an image that is not one, an unknown type and a broken block are notes, not failures", async () => {
    const output = await show({
      content: [
        { type: "image", data: Buffer.from("GIF89a not a png").toString("base64"), mimeType: "image/png" },
        { type: "image", data: "%%%%", mimeType: "image/png" },
        { type: "image", data: PNG, mimeType: "image/svg+xml" },
        { type: "hologram", data: "…" },
        { type: "text" },
      ],
    });
    expect(output.content.split("\n")).toEqual([
      "[image not shown: the data is not a image/png image]",
      "[image not shown: the data is not base64]",
      '[image not shown: "image/svg+xml" is not an image type the model reads (PNG, JPEG, GIF, WebP)]',
      '[a content block of type "hologram", which this gateway does not read]',
      "[a text block without text]",
    ]);
  });

  it("a result over the limit is cut, at a character boundary, with a note saying how big it was", async () => {
    const output = await show(
      {
        content: [
          { type: "text", text: "é".repeat(1000) },
          { type: "image", data: PNG, mimeType: "image/png" },
        ],
      },
      1001,
    );
    const [text, note] = output.content.split("\n");
    expect(text).toBe("é".repeat(500));
    expect(note).toBe(
      "[the result was cut: it was 3.5 KB, more than the 1001 B a tool result may have here (MCP_MAX_RESULT_BYTES); 1 of its 2 blocks are not shown. Ask the tool for less, e.g. a smaller range or page.]",
    );
  });
});

describe("tool names", () => {
  it("keeps a valid name, replaces other characters, shortens long ones with a hash, and keeps them apart", async () => {
    const taken = new Set<string>();
    const give = (tool: string) => {
      const name = toolNameFor("github", tool, taken);
      taken.add(name);
      return name;
    };
    expect(give("create_issue")).toBe("mcp__github__create_issue");
    expect(give("repo.list/all")).toBe("mcp__github__repo_list_all");
    expect(give("repo_list_all")).toMatch(/^mcp__github__repo_list_all_[0-9a-f]{8}$/);
    const long = give("x".repeat(100));
    expect(long).toHaveLength(64);
    for (const name of taken) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
  });

  it("a hostile list keeps its usable tools and says what it left out or renamed", async () => {
    const listing = vetTools("evil", [
      { name: "ok", inputSchema: { type: "object" } },
      { name: "ok", inputSchema: { type: "object" } },
      { name: "", inputSchema: { type: "object" } },
      { name: "no_schema" },
      { name: "big", inputSchema: { type: "object", description: "x".repeat(40_000) } },
      { name: "wordy", description: "y".repeat(10_000), inputSchema: { type: "object" } },
    ]);
    expect(listing.tools.map((t) => [t.name, t.description.length])).toEqual([
      ["mcp__evil__ok", 35],
      ["mcp__evil__wordy", 2001],
    ]);
    expect(listing.notes).toEqual([
      'tool "ok" is listed twice; the second is left out',
      "tool #3 has an empty name and is left out",
      "tool #4 of the list is left out: inputSchema: Invalid input: expected object, received undefined",
      'tool "big" is left out: its input schema is 40034 bytes, more than 32768',
    ]);
  });
});

describe("who approves an MCP tool", () => {
  const listed = (readOnly: boolean, destructive: boolean) => ({
    name: "mcp__s__t",
    original: "t.x",
    description: "t",
    inputSchema: { type: "object" as const },
    readOnly,
    destructive,
    idempotent: false,
  });
  const call = async () => ({ content: "ran" });

  it("by default its annotations decide: read-only runs, anything else (or destructive) asks; the server's approval overrides", async () => {
    expect(adaptTool("s", "writes", listed(true, false), call).requiresApproval).toBe(false);
    expect(adaptTool("s", "writes", listed(false, false), call).requiresApproval).toBe(true);
    expect(adaptTool("s", "writes", listed(true, true), call).requiresApproval).toBe(true);
    expect(adaptTool("s", "always", listed(true, false), call).requiresApproval).toBe(true);
    expect(adaptTool("s", "never", listed(false, true), call).requiresApproval).toBe(false);
  });

  it("the approval prompt's target is the server and the server's own name for the tool", async () => {
    expect(adaptTool("github", "writes", listed(false, false), call).approvalTarget({ title: "x" })).toEqual({ text: "MCP server github, tool t.x", fields: [] });
    expect(mcpApprovalTarget("github", "create_issue")).toEqual({ text: "MCP server github, tool create_issue", fields: [] });
  });
});
