// The files agents sent (send_file) as the HTTP API shows them: `{file_id, filename, mime, url}`, the id being the
// unguessable one of GET /v1/files/{id} (downloadable by the conversation's owner only). Text replies and file
// replies come from the same outbox; a file reply's text is its caption.
import type { ApiReads, OutboundRecord } from "../../src/gateway/index.js";

export interface FileView {
  file_id: string;
  filename: string;
  mime: string;
  size: number;
  url: string;
  agent: string;
  caption?: string;
}

/** Where the owner downloads a file (relative to the API's address). */
export function fileUrl(publicId: string): string {
  return `/v1/files/${publicId}`;
}

/** The file a reply carries, or null for a text reply (or a file erased since). */
export async function fileView(store: ApiReads, reply: OutboundRecord): Promise<FileView | null> {
  if (!reply.fileId) return null;
  const file = await store.file(reply.fileId);
  if (!file) return null;
  return {
    file_id: file.publicId,
    filename: file.name,
    mime: file.mime,
    size: file.size,
    url: fileUrl(file.publicId),
    agent: reply.agent,
    ...(reply.text !== "" ? { caption: reply.text } : {}),
  };
}

/** A request's replies split: its text messages, and the files it sent, each in order. */
export async function splitReplies(store: ApiReads, replies: readonly OutboundRecord[]): Promise<{ texts: OutboundRecord[]; files: FileView[] }> {
  const texts: OutboundRecord[] = [];
  const files: FileView[] = [];
  for (const reply of replies) {
    if (!reply.fileId) texts.push(reply);
    else {
      const view = await fileView(store, reply);
      if (view) files.push(view);
    }
  }
  return { texts, files };
}
