// Files for tests, made here rather than checked in: real images (with EXIF and GPS to be dropped), PDFs of any
// page count, and the hostile ones (a decompression bomb's header, a ZIP named .png, a PDF that is not one).
import { crc32, deflateRawSync } from "node:zlib";
import { PDFDocument, StandardFonts } from "pdf-lib";
import sharp from "sharp";
import { pngBombHeader } from "./png-bomb.js";

export { pngBombHeader };

/** A photo-like JPEG with EXIF (camera, orientation) and GPS coordinates, as a phone writes them. */
export async function jpegWithGps(width = 2400, height = 1600): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 30, g: 120, b: 200 } } })
    .jpeg({ quality: 80 })
    .withExif({
      IFD0: { Make: "PhoneMaker", Model: "Phone 9", Orientation: "1" },
      IFD3: { GPSLatitudeRef: "N", GPSLatitude: "48/1 51/1 2400/100", GPSLongitudeRef: "E", GPSLongitude: "2/1 21/1 300/100" },
    })
    .toBuffer();
}

export async function png(width = 64, height = 48, alpha = false): Promise<Buffer> {
  return sharp({ create: { width, height, channels: alpha ? 4 : 3, background: { r: 200, g: 40, b: 40, alpha: alpha ? 0.5 : 1 } } })
    .png()
    .toBuffer();
}

/** A ZIP archive holding `inflated` bytes of zeros (a zip bomb's shape), to be sent under an image's name. */
export function zipBomb(inflated = 50 * 1024 * 1024): Buffer {
  const data = deflateRawSync(Buffer.alloc(inflated));
  const name = Buffer.from("zeros.bin");
  const crc = crc32(Buffer.alloc(inflated)) >>> 0;
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(crc, 14);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(inflated, 22);
  local.writeUInt16LE(name.length, 26);
  const central = Buffer.alloc(46);
  central.writeUInt32LE(0x02014b50, 0);
  central.writeUInt16LE(20, 4);
  central.writeUInt16LE(20, 6);
  central.writeUInt16LE(8, 10);
  central.writeUInt32LE(crc, 16);
  central.writeUInt32LE(data.length, 20);
  central.writeUInt32LE(inflated, 24);
  central.writeUInt16LE(name.length, 28);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(1, 8);
  end.writeUInt16LE(1, 10);
  end.writeUInt32LE(46 + name.length, 12);
  end.writeUInt32LE(30 + name.length + data.length, 16);
  return Buffer.concat([local, name, data, central, name, end]);
}

/** A PDF of `pages` pages, each saying its number (page objects written plainly, as most producers do). */
export async function pdf(pages = 2, title = "Contract"): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) doc.addPage([300, 200]).drawText(`${title}, page ${i}`, { x: 20, y: 100, size: 14, font });
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

/** A PDF whose trailer names an /Encrypt dictionary (what a password-protected PDF carries). */
export async function encryptedPdf(): Promise<Buffer> {
  const plain = (await pdf(1)).toString("latin1");
  return Buffer.from(plain.replace(/trailer\s*<</, "trailer\n<<\n/Encrypt << /Filter /Standard /V 2 /R 3 /Length 128 /P -4 /O (x) /U (y) >>"), "latin1");
}

/** A minimal Ogg page carrying an OpusHead: what a Telegram voice note starts with. */
export function oggOpus(): Buffer {
  const page = Buffer.alloc(64);
  page.write("OggS", 0, "latin1");
  page.write("OpusHead", 28, "latin1");
  return page;
}
