import type { EncodedImage } from "./image.js";

// The model's copy of a photo, made by the intake from the same decoded pixels as the stored copy (image.ts), kept
// here until the runtime shows the photo to the model: by the stored copy's content address, so only the very
// bytes it was made beside find it. Taken once (the runtime keeps the blocks it makes); a copy nobody takes (a
// message refused, another replica running the session) is dropped oldest first past the bounds below. A miss
// costs one more decode (imageForModel), never a wrong image.

const MAX_COPIES = 32;
const MAX_BYTES = 32 * 1024 * 1024;

const copies = new Map<string, EncodedImage>();
let held = 0;

export function keepModelCopy(sha256: string, copy: EncodedImage): void {
  if (copy.bytes.length > MAX_BYTES) return;
  takeModelCopy(sha256);
  copies.set(sha256, copy);
  held += copy.bytes.length;
  for (const [key, oldest] of copies) {
    if (copies.size <= MAX_COPIES && held <= MAX_BYTES) break;
    copies.delete(key);
    held -= oldest.bytes.length;
  }
}

/** The copy made beside the stored bytes with this content address, once; null when there is none (any more). */
export function takeModelCopy(sha256: string): EncodedImage | null {
  const copy = copies.get(sha256);
  if (!copy) return null;
  copies.delete(sha256);
  held -= copy.bytes.length;
  return copy;
}
