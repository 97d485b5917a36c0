// send_file through the whole path on Telegram: the scripted model calls the tool, the step commits the file with
// the call's result, the outbox hands it to the provider, and real grammY uploads it to the fake Bot API
// (sendDocument/sendPhoto multipart, checked by the fake like the Bot API does).
import { describe, expect, it } from "vitest";
import { reply, text, toolUse, type MessagesRequest } from "../../fakes/anthropic/server.js";
import { png } from "../../helpers/files.js";
import { ALICE, useTelegramWorld } from "../../helpers/telegram-world.js";

const world = useTelegramWorld();
let nextId = 900;

function say(fields: Record<string, unknown>): void {
  world.tg.pushUpdate({
    message: {
      message_id: nextId++,
      from: { id: ALICE, is_bot: false, first_name: "Alice" },
      chat: { id: ALICE, type: "private", first_name: "Alice" },
      date: Math.floor(Date.now() / 1000),
      ...fields,
    },
  });
}

/** The tool_results the model was given in request `n` (0-based), by tool use id. */
function results(n: number): Record<string, { content: string; is_error: boolean }> {
  const req = world.model.accepted()[n] as MessagesRequest;
  const out: Record<string, { content: string; is_error: boolean }> = {};
  for (const block of req.messages.at(-1)!.content as Array<Record<string, unknown>>) {
    if (block.type !== "tool_result") continue;
    const content = typeof block.content === "string" ? block.content : (block.content as Array<{ text?: string }>).map((b) => b.text ?? "").join("");
    out[String(block.tool_use_id)] = { content, is_error: block.is_error === true };
  }
  return out;
}

describe("send_file on Telegram", () => {
  it("uploads a CSV the agent wrote with sendDocument and its caption, before the reply that follows", async () => {
    const { h } = await world.boot({}, [], { sendFile: true });
    world.model.script(
      reply(toolUse("send_file", { filename: "sales.csv", content: "month,total\nJan,3\n", caption: "Sales by month" }, "toolu_csv")),
      text("Here is the table."),
    );
    say({ text: "make me the sales table" });
    const answer = await world.nth(ALICE, 1);
    expect(answer.text).toBe("Here is the table.");
    const [sent, ...more] = world.tg.sentFiles(ALICE);
    expect(more).toEqual([]);
    expect(sent).toMatchObject({ method: "sendDocument", filename: "sales.csv", caption: "Sales by month" });
    expect(sent!.bytes.toString()).toBe("month,total\nJan,3\n");
    expect(sent!.message_id).toBeLessThan(answer.message_id);
    const result = results(1).toolu_csv!;
    expect(result.is_error).toBe(false);
    expect(result.content).toMatch(/^Sent sales\.csv \(text\/csv, 18 bytes\) to the chat \(file id \S+\)\.$/);
    // Stored with the conversation, owned by the user whose task made it; delivered once.
    const [file] = await h.store.files.ofSession(`telegram:${ALICE}`);
    expect(file).toMatchObject({ name: "sales.csv", mime: "text/csv", ownerId: `telegram:${ALICE}`, requestId: null });
    expect(await h.store.outbox.pending(`telegram:${ALICE}`)).toEqual([]);
  });

  it("sends back a file the user sent, by its name, as a photo", async () => {
    await world.boot({}, [], { sendFile: true });
    const chart = await png(400, 300);
    const doc = world.tg.addFile(chart, { ext: "png" });
    world.model.script(text("Got it."), reply(toolUse("send_file", { filename: "chart.png", path: "chart.png" }, "toolu_back")), text("There it is again."));
    say({
      caption: "keep this",
      document: { file_id: doc.file_id, file_unique_id: doc.file_unique_id, file_name: "chart.png", mime_type: "image/png", file_size: doc.file_size },
    });
    await world.nth(ALICE, 1);
    say({ text: "send me my chart back" });
    expect((await world.nth(ALICE, 2)).text).toBe("There it is again.");
    const [sent] = world.tg.sentFiles(ALICE);
    expect(sent).toMatchObject({ method: "sendPhoto", filename: "chart.png" });
    expect(results(2).toolu_back).toMatchObject({ is_error: false });
  });

  it("answers bad calls with tool errors naming what was wrong, and sends only the good one", async () => {
    await world.boot({}, [], { sendFile: true, maxFileBytes: 1024 });
    world.model.script(
      reply(
        toolUse("send_file", { filename: "a.txt", content: "x", path: "a.txt" }, "toolu_both"),
        toolUse("send_file", { filename: "a.txt" }, "toolu_neither"),
        toolUse("send_file", { filename: "passwd", path: "../../etc/passwd" }, "toolu_escape"),
        toolUse("send_file", { filename: "big.txt", content: "y".repeat(2000) }, "toolu_big"),
        toolUse("send_file", { filename: "notes.txt", content: "\u0000\u0001\u0002binary\u0000" }, "toolu_binary"),
        toolUse("send_file", { filename: "../../evil\u0007\nname.csv", content: "a,b\n" }, "toolu_name"),
      ),
      text("Done."),
    );
    say({ text: "send files" });
    await world.nth(ALICE, 1);
    const r = results(1);
    expect(r.toolu_both).toEqual({ is_error: true, content: expect.stringContaining('give exactly one of "content"') });
    expect(r.toolu_neither).toEqual({ is_error: true, content: expect.stringContaining('give exactly one of "content"') });
    expect(r.toolu_escape).toEqual({ is_error: true, content: expect.stringContaining('"../../etc/passwd" is not a file of this conversation') });
    expect(r.toolu_big).toEqual({ is_error: true, content: expect.stringContaining("files can be at most 1 KB (MAX_FILE_BYTES)") });
    // The type comes from the bytes: not text, whatever the name says.
    expect(r.toolu_binary).toEqual({ is_error: false, content: expect.stringContaining("notes.txt (application/octet-stream") });
    expect(r.toolu_name).toEqual({ is_error: false, content: expect.stringContaining("Sent evilname.csv (text/csv") });
    expect(world.tg.sentFiles(ALICE).map((f) => [f.method, f.filename])).toEqual([
      ["sendDocument", "notes.txt"],
      ["sendDocument", "evilname.csv"],
    ]);
  });

  it("retries a file Telegram failed to take, and sends it once", async () => {
    await world.boot({}, [], { sendFile: true });
    world.tg.addChat({ id: ALICE, type: "private" });
    world.tg.failNext("sendDocument", { error_code: 500, description: "Internal Server Error" });
    world.model.script(reply(toolUse("send_file", { filename: "r.md", content: "# Report\n" })), text("Sent."));
    say({ text: "report please" });
    await world.nth(ALICE, 1);
    await world.tg.waitFor("sendDocument", () => world.tg.sentFiles(ALICE).length >= 1);
    expect(world.tg.sentFiles(ALICE).map((f) => f.filename)).toEqual(["r.md"]);
  });
});
