// A message's files as the store keeps them: the ones read (a failure was already told to the user by the
// provider), each with a log id and an unguessable id for its download URL.
import { publicFileId } from "../files/ids.js";
import type { InboundFile } from "../files/types.js";
import { sessionFullReason } from "../files/limits.js";
import type { NewStoredFile, Store } from "../store/store.js";

export function toStore(files: readonly InboundFile[], ids: { next(prefix: string): string }, random?: (bytes: number) => Buffer): NewStoredFile[] {
  return files.flatMap((f) =>
    f.ok
      ? [
          {
            id: ids.next("fil"),
            publicId: publicFileId(random),
            sha256: f.sha256,
            name: f.name,
            mime: f.mime,
            kind: f.kind,
            size: f.size,
            voice: f.voice === true,
            bytes: f.bytes,
          },
        ]
      : [],
  );
}

/**
 * The files that fit under MAX_SESSION_FILE_BYTES (`cap`; 0: no cap) with what the conversation holds already; the
 * others become failures naming the limit. Counted conservatively: a file whose bytes the conversation already
 * holds counts again (it is stored once, so the real total may be lower).
 */
export async function withinSessionCap(files: readonly InboundFile[], store: Pick<Store, "files">, sessionKey: string, cap: number): Promise<InboundFile[]> {
  if (cap <= 0 || !files.some((f) => f.ok)) return [...files];
  let total = await store.files.sessionBytes(sessionKey);
  const counted = new Set<string>();
  const out: InboundFile[] = [];
  for (const f of files) {
    if (!f.ok || counted.has(f.sha256)) {
      out.push(f);
      continue;
    }
    if (total + f.size > cap) {
      out.push({ ok: false, name: f.name, reason: sessionFullReason(f.name, cap) });
      continue;
    }
    total += f.size;
    counted.add(f.sha256);
    out.push(f);
  }
  return out;
}
