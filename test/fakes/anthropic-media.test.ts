// The fake Messages API checks image and document blocks as the real one does (see anthropic/media.ts for where
// each rule and its wording come from), driven through the real SDK; and Switchboard's own blocks pass.
import Anthropic from "@anthropic-ai/sdk";
import sharp from "sharp";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { modelBlocks } from "../../src/files/blocks.js";
import { acceptFile } from "../../src/files/intake.js";
import { AnthropicModel } from "../../src/llm/anthropic.js";
import { encryptedPdf, jpegWithGps, pdf, png } from "../helpers/files.js";
import { startFakeAnthropic, text, type FakeAnthropic } from "./anthropic/server.js";

let fake: FakeAnthropic;
let client: Anthropic;

beforeAll(async () => {
  fake = await startFakeAnthropic();
  client = new Anthropic({ apiKey: "test-key", baseURL: fake.url, maxRetries: 0 });
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

const image = (data: string, media_type = "image/png") => ({ type: "image", source: { type: "base64", media_type, data } });
const pdfBlock = (data: string) => ({ type: "document", source: { type: "base64", media_type: "application/pdf", data } });

async function refused(content: unknown[], status = 400): Promise<string> {
  fake.script(text("must not be used"));
  const body = { model: "claude-test", max_tokens: 100, messages: [{ role: "user", content }] };
  const error = await client.messages.create(body as unknown as Anthropic.MessageCreateParamsNonStreaming).then(
    () => null,
    (e: unknown) => e as InstanceType<typeof Anthropic.APIError>,
  );
  expect(error?.status).toBe(status);
  return error?.apiMessage ?? "";
}

describe("the fake Messages API with images and documents", () => {
  it("refuses an image whose media type is not one of the four", async () => {
    expect(await refused([image((await png()).toString("base64"), "image/bmp")])).toBe(
      "messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', 'image/png', 'image/gif' or 'image/webp'",
    );
  });

  it("refuses bytes that do not match the declared type, bad base64 and an empty image", async () => {
    const jpeg = (await jpegWithGps(40, 30)).toString("base64");
    expect(await refused([image(jpeg, "image/png")])).toBe("messages.0.content.0.image.source.base64.data: Image does not match the provided media type image/png");
    expect(await refused([image("not base64!")])).toBe("messages.0.content.0.image.source.base64.data: Invalid base64 data");
    expect(await refused([image("")])).toBe("messages.0.content.0.image.source.base64: image cannot be empty");
  });

  it("refuses an image over 5 MB of base64 and one over 8000 px a side", async () => {
    const big = Buffer.alloc(4 * 1024 * 1024);
    (await png()).copy(big);
    expect(await refused([image(big.toString("base64"))])).toBe(
      `messages.0.content.0.image.source.base64: image exceeds 5 MB maximum: ${big.toString("base64").length} bytes > 5242880 bytes`,
    );
    const wide = await sharp({ create: { width: 8001, height: 2, channels: 3, background: "#000" } })
      .png()
      .toBuffer();
    expect(await refused([image(wide.toString("base64"))])).toBe(
      "messages.0.content.0.image.source.base64.data: At least one of the image dimensions exceed max allowed size: 8000 pixels",
    );
  });

  it("holds images to 2000 px when a request has more than 20, and counts 100 images and documents at most", async () => {
    const small = (await png(10, 10)).toString("base64");
    const large = (await png(2001, 10)).toString("base64");
    expect(await refused([...Array.from({ length: 20 }, () => image(small)), image(large)])).toBe(
      "messages.0.content.20.image.source.base64.data: At least one of the image dimensions exceed max allowed size for many-image requests: 2000 pixels",
    );
    const doc = (await pdf(1)).toString("base64");
    expect(await refused([...Array.from({ length: 100 }, () => image(small)), pdfBlock(doc)])).toBe("too many images and documents: 100 + 1 > 100");
  });

  it("refuses more than 100 PDF pages, a password-protected PDF and a 'PDF' that is not one", async () => {
    expect(await refused([pdfBlock((await pdf(101)).toString("base64"))])).toBe(
      "messages.0.content.0.pdf.source.base64.data: A maximum of 100 PDF pages may be provided.",
    );
    expect(await refused([pdfBlock((await encryptedPdf()).toString("base64"))])).toBe(
      "messages.0.content.0.pdf.source.base64.data: The PDF specified is password protected.",
    );
    expect(await refused([pdfBlock(Buffer.from("<html></html>").toString("base64"))])).toBe(
      "messages.0.content.0.pdf.source.base64.data: The PDF specified was not valid.",
    );
  });

  it("refuses fields the API does not know on an image block", async () => {
    expect(await refused([{ ...image((await png()).toString("base64")), file_id: "x" }])).toBe("messages.0.content.0.file_id: Extra inputs are not permitted");
  });

  it("answers 413 request_too_large past 32 MB", async () => {
    expect(await refused([{ type: "text", text: "x".repeat(33 * 1024 * 1024) }], 413)).toBe("Request exceeds the maximum allowed number of bytes.");
  });
});

describe("Switchboard's file blocks through the real SDK", () => {
  it("sends a photo, a PDF and a CSV the API accepts", async () => {
    const model = new AnthropicModel({ apiKey: "k", baseURL: fake.url, maxRetries: 0 });
    const blocks = [];
    for (const [name, bytes] of [
      ["photo.jpg", await jpegWithGps(5000, 3000)],
      ["contract.pdf", await pdf(3)],
      ["sales.csv", Buffer.from("a,b\n1,2\n")],
    ] as const) {
      const file = await acceptFile({ name, bytes }, { maxFileBytes: 20 * 1024 * 1024 });
      if (!file.ok) throw new Error(file.reason);
      blocks.push(...(await modelBlocks(file)));
    }
    fake.script(text("I see a blue photo, a contract and a table."));
    const response = await model.complete({
      model: "claude-test",
      system: "",
      messages: [{ role: "user", content: [...blocks, { type: "text", text: "What are these?" }] }],
      tools: [],
    });
    expect(response.content).toEqual([{ type: "text", text: "I see a blue photo, a contract and a table." }]);
    expect(fake.rejected()).toEqual([]);
    const sent = fake.accepted()[0]!.messages[0]!.content as Array<{ type: string }>;
    expect(sent.map((b) => b.type)).toEqual(["text", "image", "text", "document", "text", "document", "text"]);
  });
});
