// Files passed to a child frame (use_skill, use_agent, call_agent with `files`), through the real path: the HTTP
// API, the gateway storing the files, the runtime, the strict fake Messages API. A child sees the files of the
// message that reached it and what its parent passes on, nothing else; a file its parent cannot see is a tool error.
import { expect, it } from "vitest";
import { reply, systemText, text, toolUse, type MessagesRequest } from "../fakes/anthropic/server.js";
import { png } from "../helpers/files.js";
import { agentFile, skillFile, type Harness } from "../helpers/harness.js";
import { apiPerTest, post } from "../helpers/http-api.js";
import { resultTexts, speaker } from "../helpers/requests.js";

const startApi = apiPerTest();
let h: Harness;

type Block = { type: string; text?: string };
/** The blocks of the first user message of a request (a child's task). */
const firstMessage = (req: MessagesRequest) => req.messages[0]!.content as Block[];
const texts = (blocks: Block[]) => blocks.flatMap((b) => (b.type === "text" ? [b.text!] : []));
const images = (req: MessagesRequest) => req.messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Block[]) : [])).filter((b) => b.type === "image").length;

async function boot() {
  let base: string;
  ({ h, base } = await startApi({ files: { ...skillFile("describe", "Describe what you are shown."), ...agentFile("helper", "Help.") } }));
  return base;
}

/** Sends two images, "whiteboard.png" and "receipt.png", with `words`. */
async function sendTwo(base: string, words: string, session?: string): Promise<string> {
  const res = await post(base, "/v1/messages", {
    ...(session ? { session_id: session } : {}),
    items: [
      { content_type: "text", content: words },
      { content_type: "image/png", content: (await png(32, 32)).toString("base64"), filename: "whiteboard.png" },
      { content_type: "image/png", content: (await png(40, 20)).toString("base64"), filename: "receipt.png" },
    ],
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { session_id: string }).session_id;
}

it("use_skill passes the image it names to the skill, whose first message carries it, and not the other", async () => {
  const base = await boot();
  let child: MessagesRequest | undefined;
  h.fake.script(
    reply(toolUse("use_skill", { name: "describe", message: "What is on this whiteboard?", files: ["whiteboard.png"] })),
    (req) => {
      child = req;
      return reply(toolUse("complete", { result: "a plan" }));
    },
    text("The whiteboard shows a plan."),
  );
  await sendTwo(base, "what is this?");
  expect(h.fake.rejected()).toEqual([]);
  expect(systemText(child!)).toContain('You are the skill "describe"');
  const blocks = firstMessage(child!);
  expect(blocks.map((b) => b.type)).toEqual(["text", "text", "image"]);
  expect(texts(blocks)).toEqual(["What is on this whiteboard?", expect.stringMatching(/^\[Attached image: whiteboard\.png \(image\/png, /)]);
  expect(images(child!)).toBe(1);
  expect(JSON.stringify(child!.messages)).not.toContain("receipt.png");
});

it("call_agent passes a file by its id; the callee sees it alone", async () => {
  const base = await boot();
  h.fake.script(text("two images"));
  const session = await sendTwo(base, "keep these");
  const requests = await h.store.requests.ofSession(`http:${session}`);
  const receipt = (await h.store.files.ofRequest(requests[0]!.id)).find((f) => f.name === "receipt.png")!;

  let callee: MessagesRequest | undefined;
  let answer: Array<{ content: string; error: boolean }> = [];
  h.fake.script(
    reply(toolUse("call_agent", { agent: "helper", message: "Total this receipt.", files: [receipt.id] })),
    (req) => {
      callee = req;
      return text("12.50");
    },
    (req) => {
      answer = resultTexts(req);
      return text("It comes to 12.50.");
    },
  );
  expect((await post(base, "/v1/messages", { session_id: session, items: [{ content_type: "text", content: "total the receipt" }] })).status).toBe(200);
  expect(speaker(callee!)).toBe("helper");
  expect(texts(firstMessage(callee!))).toEqual(["Total this receipt.", expect.stringMatching(/^\[Attached image: receipt\.png /)]);
  expect(images(callee!)).toBe(1);
  expect(JSON.stringify(callee!.messages)).not.toContain("whiteboard.png");
  expect(answer).toEqual([{ content: "12.50", error: false }]);
  // The child's log names the file by id, never its bytes.
  const log = await h.store.steps.log(`http:${session}`);
  const childMessages = log.filter((e) => e.type === "message" && e.agentSessionId !== log[0]!.agentSessionId);
  expect(JSON.stringify(childMessages.map((e) => e.payload))).toContain(`"file_id":"${receipt.id}"`);
});

it("answers a file the parent cannot see with a tool error naming the ones it can, and starts nothing", async () => {
  const base = await boot();
  let results: Array<{ content: string; error: boolean }> = [];
  h.fake.script(
    reply(
      toolUse("use_skill", { name: "describe", message: "look", files: ["whiteboard.png", "file_notmine"] }),
      toolUse("call_agent", { agent: "helper", message: "look", files: "receipt.png" }),
    ),
    (req) => {
      results = resultTexts(req);
      return text("sorry");
    },
  );
  await sendTwo(base, "look");
  expect(results).toEqual([
    {
      content: expect.stringMatching(
        /^use_skill refused: files: there is no file "file_notmine" among the files you can see; pass one of: whiteboard\.png \(\S+\), receipt\.png \(\S+\)\. No skill was started\.$/,
      ),
      error: true,
    },
    { content: 'call_agent refused: files must be a list of file ids or names, e.g. ["report.pdf"]. Nothing was called.', error: true },
  ]);
  expect(h.fake.accepted().map(speaker)).toEqual(["main", "main"]);
});
