// Reading a response body without trusting its size: the cap applies to the decoded bytes, and reading stops
// (and the stream is destroyed) as soon as the cap is reached, so an endless body or a compression bomb costs at
// most the cap plus the streams' internal buffers.
import type { Readable, Transform } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";

export interface CappedBody {
  bytes: Buffer;
  truncated: boolean;
}

const DECODERS: Record<string, () => Transform> = {
  gzip: createGunzip,
  "x-gzip": createGunzip,
  deflate: createInflate,
  br: createBrotliDecompress,
};

/** The decoders for a Content-Encoding header, in the order they must run; throws for an encoding we cannot undo. */
function decodersFor(contentEncoding: string | undefined): Transform[] {
  const codings = (contentEncoding ?? "")
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c && c !== "identity");
  return codings.reverse().map((coding) => {
    const make = DECODERS[coding];
    if (!make) throw new Error(`the server sent a body in the "${coding}" encoding, which cannot be decoded (gzip, deflate and br can)`);
    return make();
  });
}

/** Reads at most `maxBytes` decoded bytes of `body`, then stops reading and destroys the streams. */
export async function readCapped(body: Readable, contentEncoding: string | undefined, maxBytes: number): Promise<CappedBody> {
  const decoders = decodersFor(contentEncoding);
  const streams: Readable[] = [body, ...decoders];
  let source: Readable = body;
  for (const decoder of decoders) {
    const upstream = source;
    upstream.on("error", (error) => decoder.destroy(error));
    source = upstream.pipe(decoder);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  let truncated = false;
  try {
    for await (const chunk of source) {
      const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string);
      if (size + bytes.length > maxBytes) {
        chunks.push(bytes.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        break;
      }
      chunks.push(bytes);
      size += bytes.length;
    }
  } finally {
    for (const stream of streams) stream.destroy();
  }
  return { bytes: Buffer.concat(chunks, size), truncated };
}
