// Delivering an outbox entry that carries a file (send_file): the stored file read back and handed to the sink's
// `deliverFile` (each platform's upload); a sink without one gets a text naming the file, with its download link
// where the gateway has one. Failures are the text replies' (DeliveryError), so the outbox retries or gives up alike.
import { describeFile } from "../files/intake.js";
import type { OutboundFile } from "../files/types.js";
import type { OutboundRecord, Store } from "../store/store.js";
import { DeliveryError, type DeliveryReceipt, type ProviderSink } from "./types.js";

/** The URL a file can be downloaded at by its owner (the HTTP API's GET /v1/files/{id}), or null without one. */
export type FileLink = (publicId: string) => string | null;

export async function deliverFileEntry(
  store: Pick<Store, "files">,
  sink: ProviderSink,
  out: OutboundRecord & { fileId: string },
  receipt: DeliveryReceipt,
  fileLink?: FileLink,
): Promise<void> {
  const file = await outboundFile(store, out);
  if (!sink.deliverFile) {
    const link = fileLink?.(file.publicId) ?? null;
    const text = `📎 ${describeFile(file)}${link ? `: ${link}` : " (kept with this conversation)"}${file.caption ? `\n${file.caption}` : ""}`;
    await sink.deliver({ id: out.id, sessionKey: out.sessionKey, requestId: out.requestId, agent: out.agent, depth: out.depth, text, kind: out.kind }, receipt);
    return;
  }
  await sink.deliverFile(file);
}

/** The stored file an entry names, as a sink receives it; a file erased before it was sent can never be. */
export async function outboundFile(store: Pick<Store, "files">, out: OutboundRecord & { fileId: string }): Promise<OutboundFile> {
  const stored = await store.files.get(out.fileId);
  const bytes = stored ? await store.files.bytes(stored.sessionKey, stored.sha256) : null;
  if (!stored || !bytes)
    throw new DeliveryError(`file ${out.fileId} is gone`, { kind: "permanent", reason: `the file ${out.fileId} was deleted before it could be sent` });
  return {
    id: out.id,
    sessionKey: out.sessionKey,
    requestId: out.requestId,
    agent: out.agent,
    depth: out.depth,
    name: stored.name,
    mime: stored.mime,
    kind: stored.kind,
    size: stored.size,
    bytes,
    publicId: stored.publicId,
    ...(out.text !== "" ? { caption: out.text } : {}),
  };
}
