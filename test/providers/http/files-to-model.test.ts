// Files from the HTTP API to the model, through the real path: the HttpProvider, the gateway storing the files
// with the message, the runtime turning the stored files into image and document blocks for the strict fake
// Messages API, the context log naming them by id only, and GET /v1/files/{id} serving them to their owner.
import { afterEach, describe, expect, it } from "vitest";
import type { HttpProvider } from "../../../providers/http/server.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { pdf, png } from "../../helpers/files.js";
import type { Harness } from "../../helpers/harness.js";
import { post, startApi } from "../../helpers/http-api.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
});

const b64 = (bytes: Buffer) => bytes.toString("base64");
type Block = { type: string; text?: string; title?: string; source?: { type: string; media_type: string; data: string } };
const userBlocks = (call: { messages: Array<{ role: string; content: unknown }> }, index: number) =>
  call.messages.filter((m) => m.role === "user")[index]!.content as Block[];

describe("a message's files reach the model", () => {
  it("an image, a PDF and a CSV become image, document and text blocks; the log names them by id, never base64", async () => {
    let base: string;
    ({ h, api, base } = await startApi());
    h.fake.fallback(() => text("I see a chart, a contract and a table."));
    const image = await png(64, 48);
    const contract = await pdf(2, "Contract");
    const res = await post(base, "/v1/messages", {
      items: [
        { content_type: "text", content: "what are these?" },
        { content_type: "image/png", content: b64(image), filename: "chart.png" },
        { content_type: "application/pdf", content: b64(contract), filename: "contract.pdf" },
        { content_type: "text/csv", content: b64(Buffer.from("region,sales\nnorth,12\n")), filename: "sales.csv" },
      ],
    });
    expect(res.status).toBe(200);
    const answer = (await res.json()) as { session_id: string; text: string };
    expect(answer.text).toBe("I see a chart, a contract and a table.");

    const [call] = h.fake.accepted();
    const blocks = userBlocks(call!, 0);
    expect(blocks.map((b) => b.type)).toEqual(["text", "text", "image", "text", "document", "text", "document"]);
    expect(blocks[0]).toEqual({ type: "text", text: "what are these?" });
    expect(blocks[2]!.source).toMatchObject({ type: "base64", media_type: "image/png" });
    expect(blocks[4]).toMatchObject({ type: "document", title: "contract.pdf", source: { type: "base64", media_type: "application/pdf", data: b64(contract) } });
    expect(blocks[6]).toMatchObject({ type: "document", title: "sales.csv", source: { type: "text", media_type: "text/plain", data: "region,sales\nnorth,12\n" } });

    // Durable like the message: the log keeps references, the bytes are in the files role.
    const log = await h.store.steps.log(`http:${answer.session_id}`);
    const serialised = JSON.stringify(log.map((e) => e.payload));
    expect(serialised).not.toContain(b64(contract).slice(0, 200));
    const refs = log.flatMap((e) => ((e.payload as { content?: Block[] }).content ?? []).filter((b) => b.type === "file"));
    expect(refs).toEqual([
      expect.objectContaining({ type: "file", name: "chart.png", mime: "image/png", kind: "image" }),
      expect.objectContaining({ type: "file", name: "contract.pdf", mime: "application/pdf", kind: "pdf" }),
      expect.objectContaining({ type: "file", name: "sales.csv", kind: "text" }),
    ]);
    const stored = await h.store.files.get((refs[1] as unknown as { file_id: string }).file_id);
    expect(stored).toMatchObject({ ownerId: "http:alice", name: "contract.pdf", size: contract.length });
    expect(await h.store.files.bytes(stored!.sessionKey, stored!.sha256)).toEqual(contract);

    // The owner downloads it by its unguessable id; another user cannot tell it exists.
    const mine = await fetch(`${base}/v1/files/${stored!.publicId}`, { headers: { authorization: "Bearer tok-alice" } });
    expect(mine.status).toBe(200);
    expect(Buffer.from(await mine.arrayBuffer())).toEqual(contract);
    const theirs = await fetch(`${base}/v1/files/${stored!.publicId}`, { headers: { authorization: "Bearer tok-bob" } });
    expect(theirs.status).toBe(404);
  });

  it("after a few more messages an old image is shown as a line naming it, not re-sent", async () => {
    let base: string;
    ({ h, api, base } = await startApi());
    h.fake.fallback(() => text("ok"));
    const first = (await (
      await post(base, "/v1/messages", { items: [{ content_type: "image/png", content: b64(await png(32, 32)), filename: "whiteboard.png" }] })
    ).json()) as { session_id: string };
    for (const t of ["one", "two", "three"]) {
      expect((await post(base, "/v1/messages", { session_id: first.session_id, items: [{ content_type: "text", content: t }] })).status).toBe(200);
    }
    const calls = h.fake.accepted();
    expect(userBlocks(calls[0]!, 0).map((b) => b.type)).toEqual(["text", "image"]);
    expect(userBlocks(calls[2]!, 0).map((b) => b.type)).toEqual(["text", "image"]);
    const last = userBlocks(calls[3]!, 0);
    expect(last.map((b) => b.type)).toEqual(["text"]);
    expect(last[0]!.text).toMatch(/^\[Earlier file [^:]+: whiteboard\.png \(image\/png, .*\); no longer shown\. Call view_file with this id to see it again\.\]$/);
    expect(calls[3]!.tools?.map((t) => t.name)).toContain("view_file");

    // view_file brings it back: the image follows the tool's result; a made-up id is refused.
    const id = /^\[Earlier file ([^:]+):/.exec(last[0]!.text!)![1]!;
    h.fake.script(
      reply(toolUse("view_file", { file_id: "fil_not_mine" }, "toolu_a"), toolUse("view_file", { file_id: id }, "toolu_b")),
      text("It says: ship on Friday."),
    );
    const again = (await (
      await post(base, "/v1/messages", { session_id: first.session_id, items: [{ content_type: "text", content: "what did the whiteboard say?" }] })
    ).json()) as { text: string };
    expect(again.text).toBe("It says: ship on Friday.");
    const shown = h.fake.accepted().at(-1)!.messages.at(-1)!.content as Block[];
    expect(shown.map((b) => b.type)).toEqual(["tool_result", "tool_result", "text", "image"]);
    expect(shown[0]).toMatchObject({ is_error: true, content: 'there is no file "fil_not_mine" in your conversation; use the id a file\'s placeholder names' });
  });
});
