import type { PDFDocument } from "pdf-lib";

// PDFs go to the model as document blocks. The API reads at most 100 pages (600 on models with a 1M-token window;
// 100 is what every model takes) and at most 32 MB per request, base64 included, and no encrypted PDF.

export const MODEL_PDF_PAGES = 100;
/** Raw bytes whose base64 (4/3 larger) still leaves room in a 32 MB request for the rest of the conversation. */
export const MODEL_PDF_BYTES = 20 * 1024 * 1024;

export type PdfCheck = { ok: true; pages: number } | { ok: false; problem: "encrypted" | "too_many_pages" | "too_large" | "unreadable"; pages?: number; detail: string };

export async function inspectPdf(bytes: Buffer): Promise<PdfCheck> {
  if (bytes.length > MODEL_PDF_BYTES) return { ok: false, problem: "too_large", detail: `the model reads PDFs of up to ${MODEL_PDF_BYTES / 1024 / 1024} MB` };
  let doc: PDFDocument;
  try {
    // pdf-lib is loaded on the first PDF: it is most of what a process start would otherwise spend importing.
    const { PDFDocument } = await import("pdf-lib");
    doc = await PDFDocument.load(bytes, { ignoreEncryption: true, updateMetadata: false, throwOnInvalidObject: false });
  } catch (error) {
    return { ok: false, problem: "unreadable", detail: error instanceof Error ? error.message.split("\n")[0]! : String(error) };
  }
  if (doc.isEncrypted) return { ok: false, problem: "encrypted", detail: "it is password-protected" };
  const pages = doc.getPageCount();
  if (pages === 0) return { ok: false, problem: "unreadable", detail: "it has no pages" };
  if (pages > MODEL_PDF_PAGES) return { ok: false, problem: "too_many_pages", pages, detail: `it has ${pages} pages and the model reads at most ${MODEL_PDF_PAGES}` };
  return { ok: true, pages };
}
