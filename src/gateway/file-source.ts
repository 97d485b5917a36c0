// The stored files as a download route reads them (GET /v1/files/{id}): by the unguessable id, with the user who
// may read them and their bytes.
import type { FileSource, StoredFileView } from "../files/types.js";
import type { Store } from "../store/store.js";

export function storedFiles(store: Pick<Store, "files">): FileSource {
  return {
    async byPublicId(publicId: string): Promise<StoredFileView | null> {
      const file = await store.files.byPublicId(publicId);
      if (file?.expiredAt != null)
        return { publicId: file.publicId, ownerId: file.ownerId, name: file.name, mime: file.mime, size: file.size, bytes: Buffer.alloc(0), expiredAt: file.expiredAt };
      const bytes = file ? await store.files.bytes(file.sessionKey, file.sha256) : null;
      if (!file || !bytes) return null;
      return { publicId: file.publicId, ownerId: file.ownerId, name: file.name, mime: file.mime, size: file.size, bytes };
    },
  };
}
