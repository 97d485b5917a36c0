// A decompression bomb's shape, in a module of its own (no image library), so a fake server process can load it fast.
import { crc32, deflateSync } from "node:zlib";

/**
 * A PNG whose header claims `width`×`height` with a tiny IDAT: what a decompression bomb looks like before it is
 * decoded (the real thing inflates to width × height × 3 bytes). Valid chunks and CRCs.
 */
export function pngBombHeader(width = 20_000, height = 20_000): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body) >>> 0);
    return Buffer.concat([length, body, crc]);
  };
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  // One row of zeros compressed: the stream is short, the header is what a bomb shows.
  const idat = deflateSync(Buffer.alloc(width * 3 + 1));
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk("IHDR", ihdr), chunk("IDAT", idat), chunk("IEND", Buffer.alloc(0))]);
}
