// A message's files as the store keeps them: the ones read (a failure was already told to the user by the
// provider), each with a log id and an unguessable id for its download URL.
import { publicFileId } from "../files/ids.js";
import type { InboundFile } from "../files/types.js";
import type { NewStoredFile } from "../store/store.js";

export function toStore(files: readonly InboundFile[], ids: { next(prefix: string): string }, random?: (bytes: number) => Buffer): NewStoredFile[] {
  return files.flatMap((f) =>
    f.ok
      ? [{ id: ids.next("fil"), publicId: publicFileId(random), sha256: f.sha256, name: f.name, mime: f.mime, kind: f.kind, size: f.size, voice: f.voice === true, bytes: f.bytes }]
      : [],
  );
}
