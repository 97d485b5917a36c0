// The outbox delivering file replies (send_file): the stored file handed to the sink's deliverFile once; a sink
// without one gets a text naming the file (with its download link where the gateway has one); failures follow the
// text replies' rules (retried, or undeliverable once); a file erased before its delivery is given up, not retried.
// A real SQLite store, the real Outbox, sinks that answer like a platform would.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { OutboundFile } from "../../src/files/types.js";
import { Outbox } from "../../src/gateway/outbox.js";
import { DeliveryError, type OutboundMessage, type ProviderSink } from "../../src/gateway/types.js";
import { silentLogger } from "../../src/log.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { NewAgentFile, OutboundInput } from "../../src/store/store.js";
import { commitStep } from "../helpers/steps.js";
import { manualTimeouts } from "../helpers/timers.js";

const KEY = "tg:42";
let dir = "";
let store: SqliteStore;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "switchboard-outbox-files-"));
  store = new SqliteStore(join(dir, "db.sqlite"));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function agentFile(id: string, content: string, name = "report.csv"): NewAgentFile {
  const bytes = Buffer.from(content);
  const sha256 = createHash("sha256").update(bytes).digest("hex");
  return { id, publicId: `file_${id.padEnd(24, "x")}`, sha256, name, mime: "text/csv", kind: "text", size: bytes.length, voice: false, bytes, ownerId: "telegram:7" };
}

const reply = (id: string, over: Partial<OutboundInput> = {}): OutboundInput => ({
  id,
  requestId: "r1",
  taskId: "t1",
  agent: "main",
  depth: 1,
  text: "",
  kind: "message",
  ...over,
});

function outbox(sink: ProviderSink, extra: { fileLink?: (id: string) => string | null } = {}) {
  const clock = manualTimeouts();
  const box = new Outbox({ store, log: silentLogger(), sinks: new Map([[sink.prefix, sink]]), timers: clock.timers, onMoved: () => {}, ...extra });
  return { box, clock };
}

describe("file replies in the outbox", () => {
  it("hands the stored file to deliverFile once, with its caption, in order with the text replies", async () => {
    const files: OutboundFile[] = [];
    const texts: string[] = [];
    const sink: ProviderSink = { prefix: "tg", deliver: async (m) => void texts.push(m.text), deliverFile: async (f) => void files.push(f) };
    await commitStep(store, {
      sessionKey: KEY,
      files: [agentFile("f1", "a,b\n")],
      outbound: [reply("o1", { text: "The numbers", fileId: "f1" }), reply("o2", { text: "Here it is." })],
    });
    const { box } = outbox(sink);
    await box.deliver(KEY);
    await box.deliver(KEY);
    expect(files.map((f) => ({ id: f.id, name: f.name, mime: f.mime, caption: f.caption, publicId: f.publicId, bytes: f.bytes.toString() }))).toEqual([
      { id: "o1", name: "report.csv", mime: "text/csv", caption: "The numbers", publicId: agentFile("f1", "").publicId, bytes: "a,b\n" },
    ]);
    expect(texts).toEqual(["Here it is."]);
    expect(await store.outbox.pending(KEY)).toEqual([]);
  });

  it("gives a sink without file uploads a text naming the file, with the download link when there is one", async () => {
    const shown: OutboundMessage[] = [];
    const sink: ProviderSink = { prefix: "tg", deliver: async (m) => void shown.push(m) };
    await commitStep(store, {
      sessionKey: KEY,
      files: [agentFile("f1", "a,b\n"), agentFile("f2", "c\n", "c.csv")],
      outbound: [reply("o1", { text: "Sales", fileId: "f1" })],
    });
    await outbox(sink, { fileLink: (id) => `https://bot.example/v1/files/${id}` }).box.deliver(KEY);
    await commitStep(store, { sessionKey: KEY, outbound: [reply("o2", { fileId: "f2" })] });
    await outbox(sink).box.deliver(KEY);
    expect(shown.map((m) => [m.id, m.text])).toEqual([
      ["o1", `📎 report.csv (text/csv, 4 bytes): https://bot.example/v1/files/${agentFile("f1", "").publicId}\nSales`],
      ["o2", "📎 c.csv (text/csv, 2 bytes) (kept with this conversation)"],
    ]);
  });

  it("retries a transient upload failure, and gives up for good on a permanent one, once", async () => {
    let attempts = 0;
    const sink: ProviderSink = {
      prefix: "tg",
      deliver: async () => {},
      deliverFile: async (f) => {
        attempts++;
        if (f.name === "blocked.csv") throw new DeliveryError("403", { kind: "permanent", reason: "bot was blocked by the user" });
        if (attempts === 1) throw new Error("socket hang up");
      },
    };
    await commitStep(store, {
      sessionKey: KEY,
      files: [agentFile("f1", "a\n"), agentFile("f2", "b\n", "blocked.csv")],
      outbound: [reply("o1", { fileId: "f1" }), reply("o2", { fileId: "f2" })],
    });
    const { box, clock } = outbox(sink);
    await box.deliver(KEY);
    expect(attempts).toBe(1);
    expect((await store.outbox.pending(KEY)).map((o) => o.id)).toEqual(["o1", "o2"]);
    clock.fireAll();
    await box.idle();
    expect(attempts).toBe(3);
    expect(await store.outbox.pending(KEY)).toEqual([]);
    expect((await store.outbox.undeliverable(KEY)).map((o) => [o.id, o.failure])).toEqual([["o2", "bot was blocked by the user"]]);
  });

  it("gives up a file erased before its delivery, and goes on with the next reply", async () => {
    const texts: string[] = [];
    const sink: ProviderSink = { prefix: "tg", deliver: async (m) => void texts.push(m.text), deliverFile: async () => {} };
    await commitStep(store, { sessionKey: KEY, outbound: [reply("o1", { fileId: "gone" }), reply("o2", { text: "after" })] });
    await outbox(sink).box.deliver(KEY);
    expect(texts).toEqual(["after"]);
    expect((await store.outbox.undeliverable(KEY)).map((o) => [o.id, o.failure])).toEqual([["o1", "the file gone was deleted before it could be sent"]]);
  });
});
