// A file past FILE_RETENTION_DAYS, through the real path: the HTTP API, the gateway, the runtime and the strict fake
// Messages API. Once the retention deleted its bytes, the log still names it; the model is told it has expired,
// view_file says so as a tool error, and GET /v1/files/{id} answers 410 to its owner (404 to anyone else).
import { expect, it } from "vitest";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { apiPerTest, post } from "../../helpers/http-api.js";
import { resultTexts } from "../../helpers/requests.js";

const startApi = apiPerTest();

type Block = { type: string; text?: string };

it("tells the model, view_file and the download route that an expired file has expired", async () => {
  const { h, base } = await startApi();
  h.fake.script(() => text("two rows"));
  const csv = Buffer.from("region,sales\nnorth,12\n");
  const first = await post(base, "/v1/messages", {
    items: [
      { content_type: "text", content: "how many rows?" },
      { content_type: "text/csv", content: csv.toString("base64"), filename: "sales.csv" },
    ],
  });
  expect(first.status).toBe(200);
  const { session_id } = (await first.json()) as { session_id: string };
  const [stored] = await h.store.files.ofRequest((await h.store.requests.ofSession(`http:${session_id}`))[0]!.id);

  expect(await h.store.files.expire(Date.now() + 1, Date.now(), 100)).toMatchObject({ contents: 1, files: 1 });

  const get = (token: string) => fetch(`${base}/v1/files/${stored!.publicId}`, { headers: { authorization: `Bearer ${token}` } });
  const gone = await get("tok-alice");
  expect(gone.status).toBe(410);
  expect(await gone.json()).toMatchObject({
    error: {
      type: "file_expired_error",
      message: expect.stringMatching(
        new RegExp(`^the file ${stored!.publicId} \\(sales\\.csv\\) has expired: its contents were deleted on \\d{4}-.*Z \\(FILE_RETENTION_DAYS\\)$`),
      ),
    },
  });
  expect((await get("tok-bob")).status).toBe(404);

  let shown: Block[] = [];
  let viewed: Array<{ content: string; error: boolean }> = [];
  h.fake.script(
    (req) => {
      shown = req.messages.filter((m) => m.role === "user")[0]!.content as Block[];
      return reply(toolUse("view_file", { file_id: stored!.id }));
    },
    (req) => {
      viewed = resultTexts(req);
      return text("it has expired");
    },
  );
  const again = await post(base, "/v1/messages", { session_id, items: [{ content_type: "text", content: "and now?" }] });
  expect(again.status).toBe(200);
  expect(h.fake.rejected()).toEqual([]);
  expect(shown.map((b) => b.type)).toEqual(["text", "text"]);
  expect(shown[1]!.text).toMatch(/^\[File sales\.csv \(text\/csv, .*\) has expired: this gateway keeps files for a limited time \(FILE_RETENTION_DAYS\)/);
  expect(viewed).toEqual([{ content: expect.stringMatching(new RegExp(`^the file "${stored!.id}", sales\\.csv .* has expired`)), error: true }]);
});
