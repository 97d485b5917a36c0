// The approval prompt: the tool and what it acts on first (as the tool itself describes it), every other field
// shortened on its own, nothing the model writes able to hide, reorder or push out what the owner must see.
import { afterEach, describe, expect, it } from "vitest";
import { createEgress } from "../../src/net/egress.js";
import { approvalPrompt, MAX_FIELDS } from "../../src/runtime/approval-prompt.js";
import { createHttpRequestTool } from "../../src/runtime/tools/http-request.js";
import type { Tool } from "../../src/runtime/tools/tool.js";
import { reply, toolUse } from "../fakes/anthropic/server.js";
import { startHarness, type Harness } from "../helpers/harness.js";

// The calls here only wait for approval: nothing reaches the network, and the resolver says so if it ever did.
const httpRequest = createHttpRequestTool(
  createEgress({ maxBytes: 1_000, timeoutMs: 1_000, resolve: async () => Promise.reject(new Error("no network in the approval prompt tests")) }),
);

/** A tool of the kind that will come (a shell): it says its target is the command. */
const runCommand: Tool = {
  spec: { name: "run_command", description: "Runs a shell command.", input_schema: { type: "object" } },
  idempotent: false,
  requiresApproval: true,
  approvalTarget: (input) => ({ text: typeof input.command === "string" ? input.command : "", fields: ["command"] }),
  run: async () => ({ content: "ran" }),
};

const ask = (tool: Tool | undefined, name: string, input: Record<string, unknown>) => approvalPrompt({ agent: "main", tool: name, input, id: "ap_1" }, tool);
const lines = (text: string) => text.split("\n");
/** What a Slack section (3,000) and a Telegram message (4,096) hold: a prompt never needs cutting to fit. */
const FITS = 3_000;

describe("the approval prompt", () => {
  it("leads with the method and URL of an HTTP request, then the other fields", () => {
    const prompt = ask(httpRequest, "http_request", {
      url: "https://api.example.com/v1/pay?to=bob",
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"amount":50}',
    });
    expect(lines(prompt)).toEqual([
      "🔐 main wants to run http_request: POST https://api.example.com/v1/pay?to=bob",
      '• headers: {"content-type":"application/json"}',
      '• body: "{\\"amount\\":50}"',
      "Approve or deny it (ap_1).",
    ]);
  });

  it("says which method the server will see when a header overrides it", () => {
    const prompt = ask(httpRequest, "http_request", { method: "POST", url: "https://example.com/item/7", headers: { "X-HTTP-Method-Override": "delete" } });
    expect(lines(prompt)[0]).toBe("🔐 main wants to run http_request: POST as DELETE https://example.com/item/7");
  });

  it("takes each tool's own description of its target: a command for a shell-like tool", () => {
    const prompt = ask(runCommand, "run_command", { cwd: "/srv/app", command: "rm -rf ./build && make", timeout: 30 });
    expect(lines(prompt)).toEqual(["🔐 main wants to run run_command: rm -rf ./build && make", '• cwd: "/srv/app"', "• timeout: 30", "Approve or deny it (ap_1)."]);
  });

  it("without a description, lists the fields under the tool's name", () => {
    expect(ask(undefined, "transfer", { amount: 50, to: "bob" })).toBe('🔐 main wants to run transfer\n• amount: 50\n• to: "bob"\nApprove or deny it (ap_1).');
    expect(ask(undefined, "ping", {})).toBe("🔐 main wants to run ping\nApprove or deny it (ap_1).");
  });

  it("a long field the model put first cannot push the target or the fields after it out of view", () => {
    const prompt = ask(httpRequest, "http_request", {
      body: "A".repeat(200_000),
      headers: { authorization: "x" },
      method: "DELETE",
      url: "https://bank.example/accounts/1",
      note: "last",
    });
    const [head, body, headers, note, footer] = lines(prompt);
    expect(head).toBe("🔐 main wants to run http_request: DELETE https://bank.example/accounts/1");
    expect(body).toMatch(/^• body: "A+…A+"$/);
    expect(body!.length).toBeLessThanOrEqual(180);
    expect([headers, note, footer]).toEqual(['• headers: {"authorization":"x"}', '• note: "last"', "Approve or deny it (ap_1)."]);
    expect(prompt.length).toBeLessThan(FITS);
  });

  it("shortens long values one by one, keeping each one's start and end", () => {
    const prompt = ask(undefined, "send_email", { to: `boss@${"x".repeat(500)}.example`, subject: `${"s".repeat(500)}END`, cc: "me@example.com" });
    const [, to, subject, cc] = lines(prompt);
    expect(to).toMatch(/^• to: "boss@x+…x+\.example"$/);
    expect(subject).toMatch(/^• subject: "s+…s+END"$/);
    expect(cc).toBe('• cc: "me@example.com"');
  });

  it("inside a field, long strings and big lists are cut down first, so the other members still show", () => {
    const prompt = ask(undefined, "transfer", {
      order: { note: "n".repeat(10_000), amount: 900, iban: "DE89370400440532013000" },
      items: Array.from({ length: 100 }, (_, i) => i),
    });
    expect(prompt).toContain('"amount":900');
    expect(prompt).toContain('"iban":"DE89370400440532013000"');
    expect(prompt).toContain('"… 94 more"');
  });

  it("lists at most a few fields and counts the rest", () => {
    const input = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, i]));
    const prompt = ask(undefined, "bulk", input);
    expect(lines(prompt)).toHaveLength(1 + MAX_FIELDS + 1 + 1);
    expect(lines(prompt).at(-2)).toBe(`• … and ${50 - MAX_FIELDS} more fields`);
  });

  it("shows line breaks, bidirectional and zero-width characters as escapes, so nothing can fake a line or hide text", () => {
    const prompt = ask(httpRequest, "http_request", {
      method: "POST",
      url: "https://example.com/\u202Egpj.exe",
      "amount\nApprove or deny it (ap_fake).": 1,
      memo: "pay\u200Bnow",
    });
    expect(lines(prompt)).toHaveLength(4);
    expect(prompt).not.toMatch(/[\u202E\u200B]/);
    expect(prompt).toContain("• amount\\nApprove or deny it (ap_fake).: 1");
    expect(prompt).toContain('"pay\\u200bnow"');
    const command = ask(runCommand, "run_command", { command: "ls\nrm -rf /" });
    expect(lines(command)[0]).toBe("🔐 main wants to run run_command: ls\\nrm -rf /");
  });

  it("keeps the host of a URL whole however long its credentials and path are", () => {
    const url = `https://${"u".repeat(3_000)}:${"p".repeat(3_000)}@payments.evil.example/${"a".repeat(5_000)}?next=1`;
    const head = lines(ask(httpRequest, "http_request", { method: "POST", url }))[0]!;
    expect(head).toMatch(/^🔐 main wants to run http_request: POST https:\/\/payments\.evil\.example\/a+…a+\?next=1 \(with credentials\)$/);
    // An internationalised look-alike host shows in the form the request uses.
    expect(lines(ask(httpRequest, "http_request", { method: "POST", url: "https://pаypal.com/login" }))[0]).toContain("https://xn--pypal-4ve.com/login");
  });

  it("falls back to the fields when the tool cannot describe this input", () => {
    const throwing: Tool = {
      ...runCommand,
      approvalTarget: () => {
        throw new Error("bad input");
      },
    };
    expect(lines(ask(throwing, "run_command", { command: "ls" }))[0]).toBe("🔐 main wants to run run_command");
    expect(lines(ask(httpRequest, "http_request", { method: "PUT", url: { not: "a string" } }))[0]).toBe(
      '🔐 main wants to run http_request: PUT (url is not a string: {"not":"a string"})',
    );
  });

  it("stays short enough for one chat message whatever the input", () => {
    const deep: Record<string, unknown> = {};
    let at = deep;
    for (let i = 0; i < 500; i++) at = at.next = {} as Record<string, unknown>;
    const hostile = [
      { url: "x".repeat(100_000), method: "P".repeat(100_000), headers: { "x-http-method-override": "D".repeat(100_000) } },
      Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`${"k".repeat(1_000)}${i}`, "v".repeat(1_000)])),
      { deep, list: Array.from({ length: 10_000 }, () => ["x".repeat(100)]) },
    ];
    for (const input of hostile) {
      expect(ask(httpRequest, "http_request", input).length).toBeLessThan(FITS);
      expect(ask(undefined, "t".repeat(10_000), input).length).toBeLessThan(FITS);
    }
  });
});

describe("the approval prompt in the chat", () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it("an http_request POST waits for the owner, who sees the method and URL first", async () => {
    h = await startHarness({ tools: [httpRequest] });
    h.fake.script(reply(toolUse("http_request", { body: "x".repeat(5_000), method: "POST", url: "https://hooks.example.com/deploy" }, "toolu_post")));
    const prompt = (await h.send("deploy it")).find((m) => m.approvalId)!;
    expect(lines(prompt.text)[0]).toBe("🔐 main wants to run http_request: POST https://hooks.example.com/deploy");
    expect(lines(prompt.text).at(-1)).toBe(`Approve or deny it (${prompt.approvalId}).`);
    expect(await h.store.approvals.get(prompt.approvalId!)).toMatchObject({ toolName: "http_request", status: "pending" });
  });
});
