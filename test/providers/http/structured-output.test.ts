// structured_output in the HTTP API's answers: the value a child reported back (report_back), in the answer to the
// POST that produced it and in GET /v1/tasks/{id} — for an interactive child and for a call_agent (batch) callee.
// Real node:http server, real runtime, real Anthropic SDK against the strict fake Messages API.
import { afterEach, describe, expect, it } from "vitest";
import type { HttpProvider } from "../../../providers/http/server.js";
import { reply, text, toolUse } from "../../fakes/anthropic/server.js";
import { agentFile } from "../../helpers/harness.js";
import type { Harness } from "../../helpers/harness.js";
import { message, post, startApi } from "../../helpers/http-api.js";

let h: Harness;
let api: HttpProvider;
afterEach(async () => {
  await api?.stop();
  await h?.close();
  h = undefined!;
});

const CONTACT = {
  type: "object",
  properties: { name: { type: "string" }, email: { type: "string", format: "email" } },
  required: ["name", "email"],
};
const ANA = { name: "Ana Lima", email: "ana@example.com" };

async function boot() {
  let base: string;
  ({ h, api, base } = await startApi({ files: agentFile("extractor", "Extract contact details.") }));
  return base;
}

type Answer = { task_id: string; status: string; text: string; structured_output: unknown };
const getTask = async (base: string, id: string) => (await (await fetch(`${base}/v1/tasks/${id}`, { headers: { authorization: "Bearer tok-alice" } })).json()) as Answer;

describe("structured_output", () => {
  it("is null until a child reports back, then the reported value, in the POST answer and the task", async () => {
    const base = await boot();
    h.fake.script(reply(toolUse("use_agent", { name: "extractor", message: "Ana Lima", output_schema: CONTACT })), text("What is Ana's email?"));
    const first = (await (await post(base, "/v1/messages", message("save Ana's contact"))).json()) as Answer;
    expect(first).toMatchObject({ status: "waiting_user", text: "What is Ana's email?", structured_output: null });

    h.fake.script(reply(toolUse("report_back", ANA)), text("Saved Ana Lima."));
    const second = (await (await post(base, "/v1/messages", message("ana@example.com", { task_id: first.task_id }))).json()) as Answer;
    expect(second).toMatchObject({ task_id: first.task_id, status: "completed", text: "Saved Ana Lima.", structured_output: ANA });
    expect(await getTask(base, first.task_id)).toMatchObject({ status: "completed", structured_output: ANA });
  });

  it("carries a call_agent callee's report_back value too", async () => {
    const base = await boot();
    h.fake.script(
      reply(toolUse("call_agent", { agent: "extractor", message: "Best, Ana Lima — ana@example.com", output_schema: CONTACT })),
      reply(toolUse("report_back", ANA)),
      text("Saved Ana Lima."),
    );
    const answer = (await (await post(base, "/v1/messages", message("save the signature"))).json()) as Answer;
    expect(answer).toMatchObject({ status: "completed", text: "Saved Ana Lima.", structured_output: ANA });
    expect(await getTask(base, answer.task_id)).toMatchObject({ structured_output: ANA });
  });

  it("stays null for a task in which nothing reported back", async () => {
    const base = await boot();
    h.fake.script(reply(toolUse("use_agent", { name: "extractor", message: "Ana" })), reply(toolUse("complete", { result: "Ana Lima" })), text("Found Ana Lima."));
    const answer = (await (await post(base, "/v1/messages", message("find Ana"))).json()) as Answer;
    expect(answer).toMatchObject({ status: "completed", text: "Found Ana Lima.", structured_output: null });
  });
});
