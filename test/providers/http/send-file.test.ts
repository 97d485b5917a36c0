// send_file through the HTTP API: the scripted model calls the tool; a streaming client gets a `file` event, the
// answer of POST /v1/messages (and GET /v1/requests/{id}) lists the file under `files`, and its url downloads it —
// for the user whose conversation it is, and nobody else. The real HttpProvider, gateway, runtime and SQLite store.
import { afterEach, describe, expect, it } from "vitest";
import { storedFiles } from "../../../src/gateway/file-source.js";
import type { HttpProvider } from "../../../providers/http/server.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import type { Harness } from "../../helpers/harness.js";
import { message, post, startApi } from "../../helpers/http-api.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
});

async function boot(): Promise<string> {
  let base: string;
  let files: ReturnType<typeof storedFiles> | undefined;
  ({ h, api, base } = await startApi({ sendFile: true }, { files: { byPublicId: (id) => files!.byPublicId(id) } }));
  files = storedFiles(h.store);
  return base;
}

const CSV = "month,total\nJan,3\n";
const get = (base: string, path: string, token = "tok-alice") => fetch(base + path, { headers: { authorization: `Bearer ${token}` } });

describe("send_file over the HTTP API", () => {
  it("answers with the file under `files`, downloadable by its owner only", async () => {
    const base = await boot();
    h.fake.script(reply(toolUse("send_file", { filename: "sales.csv", content: CSV, caption: "Sales" })), text("Here it is."));
    const res = await post(base, "/v1/messages", message("the sales table"));
    expect(res.status).toBe(200);
    const body = (await res.json()) as { text: string; messages: Array<{ text: string }>; files: Array<Record<string, unknown>>; request_id: string };
    expect(body.text).toBe("Here it is.");
    expect(body.messages.map((m) => m.text)).toEqual(["Here it is."]);
    expect(body.files).toEqual([
      {
        file_id: expect.stringMatching(/^file_[A-Za-z0-9_-]{24}$/),
        filename: "sales.csv",
        mime: "text/csv",
        size: CSV.length,
        url: expect.any(String),
        agent: "main",
        caption: "Sales",
      },
    ]);
    const url = String(body.files[0]!.url);
    expect(url).toBe(`/v1/files/${String(body.files[0]!.file_id)}`);
    const download = await get(base, url);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toMatch(/^attachment; filename="sales.csv"/);
    expect(await download.text()).toBe(CSV);
    expect((await get(base, url, "tok-bob")).status).toBe(404);
    const request = (await (await get(base, `/v1/requests/${body.request_id}`)).json()) as { files: unknown[] };
    expect(request.files).toEqual(body.files);
  });

  it("streams a `file` event before the answer's message", async () => {
    const base = await boot();
    h.fake.script(reply(toolUse("send_file", { filename: "notes.md", content: "# Notes\n" })), text("Done."));
    const res = await post(base, "/v1/messages", message("notes please"), "tok-alice", { accept: "text/event-stream" });
    const stream = await res.text();
    const events = [...stream.matchAll(/^event: (\w+)\ndata: (.*)$/gm)].map((m) => [m[1], JSON.parse(m[2]!) as Record<string, unknown>] as const);
    const names = events.map(([name]) => name);
    expect(names.filter((n) => n !== "delta")).toEqual(["file", "message", "done"]);
    const file = events.find(([name]) => name === "file")![1];
    expect(file).toEqual({
      file_id: expect.stringMatching(/^file_/),
      filename: "notes.md",
      mime: "text/markdown",
      size: 8,
      url: `/v1/files/${String(file.file_id)}`,
      agent: "main",
    });
    const done = events.find(([name]) => name === "done")![1] as { files: unknown[] };
    expect(done.files).toEqual([file]);
  });
});
