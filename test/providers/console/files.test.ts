// Files in the terminal chat: `"files": [...]` on --jsonl lines, `/attach <path>` in the chat, and files agents send
// saved under DATA_DIR/files/. The real console provider on piped streams, the real gateway and runtime.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { startConsole, type ConsoleChat } from "../../../providers/console/console.js";
import { publicFileId } from "../../../src/files/ids.js";
import type { OutboundFile, ReceivedFile } from "../../../src/files/types.js";
import type { InboundMessage, ProviderSink } from "../../../src/gateway/types.js";
import { text } from "../../fakes/anthropic/server.js";
import { pdf, png, zipBomb } from "../../helpers/files.js";
import { startHarness, type Harness } from "../../helpers/harness.js";

let h: Harness;
let chat: ConsoleChat;
let dir: string;
afterEach(async () => {
  chat?.stop();
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function boot(jsonl: boolean) {
  h = await startHarness();
  dir = mkdtempSync(join(tmpdir(), "switchboard-console-files-"));
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (chunk: Buffer) => (shown += chunk.toString()));
  const submitted: InboundMessage[] = [];
  const submit = h.gateway.submit.bind(h.gateway);
  h.gateway.submit = (m) => (submitted.push(m), submit(m));
  let sink: ProviderSink | undefined;
  const register = h.gateway.register.bind(h.gateway);
  h.gateway.register = (s) => ((sink = s), register(s));
  chat = startConsole(h.gateway, { jsonl, exitOnEnd: true, input, output, filesDir: join(dir, "data", "files"), session: "t", user: "alice" });
  h.fake.fallback(() => text("seen"));
  const file = (name: string, bytes: Buffer) => {
    const path = join(dir, name);
    writeFileSync(path, bytes);
    return path;
  };
  const finish = async () => {
    input.end();
    await chat.done;
    return shown;
  };
  return { input, submitted, sink: () => sink!, file, finish, lines: () => shown.split("\n").filter(Boolean) };
}

const received = (m: InboundMessage | undefined) => (m?.files ?? []).filter((f): f is ReceivedFile => f.ok);

describe("--jsonl files", () => {
  it("reads the listed files, names the ones it cannot read, and sends the rest with the text", async () => {
    const { input, submitted, file, finish } = await boot(true);
    const chart = file("chart.png", await png(40, 30));
    const bomb = file("cat.png", zipBomb());
    const contract = file("contract.pdf", await pdf(2));
    mkdirSync(join(dir, "folder"));
    input.write(`${JSON.stringify({ text: "compare", files: [chart, join(dir, "missing.txt"), join(dir, "folder"), bomb] })}\n`);
    input.write(`${JSON.stringify({ files: [contract] })}\n`);
    input.write(`${JSON.stringify({ text: "" })}\n`);
    const shown = (await finish())
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(shown.filter((l) => l.agent === "switchboard" && !String(l.text).startsWith("Got it")).map((l) => l.text)).toEqual([
      `"${join(dir, "missing.txt")}" could not be opened (ENOENT).`,
      `"${join(dir, "folder")}" is not a file.`,
    ]);
    expect(shown).toContainEqual({ type: "error", message: 'line 3: text must not be empty; expected {"text": "..."}' });
    expect(submitted[0]!.text).toBe("compare");
    expect(received(submitted[0]).map((f) => [f.name, f.kind])).toEqual([
      ["chart.png", "image"],
      // A zip bomb named .png is kept as a file that is never opened, and the user hears what it is.
      ["cat.png", "other"],
    ]);
    expect(received(submitted[0])[1]!.mime).toBe("application/zip");
    expect(submitted[1]).toMatchObject({ text: "", files: [{ ok: true, kind: "pdf", name: "contract.pdf", pages: 2 }] });
  });

  it("saves a file an agent sends under DATA_DIR/files/ and prints it as a file object, never overwriting", async () => {
    const { sink, finish } = await boot(true);
    const out = (name: string, body: string): OutboundFile => {
      const bytes = Buffer.from(body);
      return {
        id: `out_${body}`,
        sessionKey: "console:t",
        requestId: null,
        agent: "skill:report",
        depth: 2,
        name,
        mime: "text/csv",
        kind: "text",
        size: bytes.length,
        bytes,
        publicId: publicFileId(),
      };
    };
    await sink().deliverFile!(out("../../etc/sales.csv", "first"));
    await sink().deliverFile!({ ...out("sales.csv", "second"), caption: "updated" });
    const shown = (await finish())
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const files = join(dir, "data", "files");
    expect(shown).toEqual([
      { type: "file", filename: "../../etc/sales.csv", path: join(files, "sales.csv"), mime: "text/csv", agent: "skill:report" },
      { type: "file", filename: "sales.csv", path: join(files, "sales-1.csv"), mime: "text/csv", agent: "skill:report", caption: "updated" },
    ]);
    expect(readFileSync(join(files, "sales.csv"), "utf8")).toBe("first");
    expect(readFileSync(join(files, "sales-1.csv"), "utf8")).toBe("second");
  });
});

describe("/attach in the chat", () => {
  it("attaches a file to the next message, and says why a path cannot be attached", async () => {
    const { input, submitted, file, finish } = await boot(false);
    const notes = file("notes.md", Buffer.from("# Plan\n- ship\n"));
    input.write(`/attach "${notes}"\n`);
    input.write(`/attach ${join(dir, "nope.png")}\n`);
    input.write("summarise this\n");
    input.write("and now without a file\n");
    const shown = await finish();
    expect(shown).toContain("· notes.md (text/markdown, 14 bytes) will go with your next message");
    expect(shown).toContain(`· "${join(dir, "nope.png")}" could not be opened (ENOENT).`);
    expect(submitted.map((m) => [m.text, received(m).map((f) => f.name)])).toEqual([
      ["summarise this", ["notes.md"]],
      ["and now without a file", []],
    ]);
  });
});
