// Human approval of tools through the gateway: the real runtime, SDK and strict fake, decisions by
// compare-and-set, at most one run per call, timeouts, restarts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { reply, startFakeAnthropic, text, toolUse, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { agentFile, startHarness, type Harness, type HarnessOptions } from "../helpers/harness.js";
import { toolResults } from "../helpers/requests.js";
import { bankTools } from "../helpers/tools.js";

let h: Harness;
afterEach(async () => {
  await h?.close();
  h = undefined!;
});

async function askForTransfer(harness: Harness) {
  harness.fake.script(reply(toolUse("balance", {}, "toolu_b"), toolUse("transfer", { amount: 50 }, "toolu_t")));
  const shown = await harness.send("send Bob 50");
  const prompt = shown.find((m) => m.approvalId)!;
  return { shown, prompt, id: prompt.approvalId! };
}

describe("approvals", () => {
  it("runs the calls that need no approval, pauses the task, and asks the owner", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { prompt } = await askForTransfer(h);
    expect(t.runs).toEqual(["balance"]);
    expect(prompt.text).toMatch(/^🔐 main wants to run transfer\n• amount: 50\nApprove or deny it \(ap_\d+\)\.$/);
    expect((await h.store.tasks.active("console:t"))?.status).toBe("waiting_approval");
    expect(h.fake.calls).toHaveLength(1);
  });

  it("approve: the tool runs once and the model continues with its result", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { id } = await askForTransfer(h);
    h.fake.script((req) => {
      expect(toolResults(req)).toEqual([
        { id: "toolu_b", content: "100 EUR", error: false },
        { id: "toolu_t", content: "sent 50", error: false },
      ]);
      return text("Sent 50 EUR to Bob.");
    });
    expect(await h.gateway.decide(id, "alice", "approve")).toMatchObject({ status: "approved" });
    await h.gateway.idle();
    expect(h.seen.at(-1)?.text).toBe("Sent 50 EUR to Bob.");
    expect(t.runs).toEqual(["balance", "transfer 50"]);
    expect(h.fake.rejected()).toEqual([]);
  });

  it("deny: the model gets an error tool_result and carries on", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { id } = await askForTransfer(h);
    h.fake.script((req) => {
      expect(toolResults(req)[1]).toEqual({ id: "toolu_t", content: "the user denied this call", error: true });
      return text("OK, I did not send anything.");
    });
    expect(await h.say(`/deny ${id}`)).toEqual([`switchboard: Denied (${id}). I won't run it.`, "main: OK, I did not send anything."]);
    expect(t.runs).toEqual(["balance"]);
  });

  it("a double click and two racing approvers run the tool at most once", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { id } = await askForTransfer(h);
    h.fake.script(text("done"));
    const [first, second, third] = await Promise.all([
      h.gateway.decide(id, "alice", "approve"),
      h.gateway.decide(id, "alice", "approve"),
      h.gateway.decide(id, "alice", "deny"),
    ]);
    await h.gateway.idle();
    expect([first, second, third]).toEqual([
      { status: "approved", requestId: expect.any(String) },
      { status: "already_decided", decided: "approved" },
      { status: "already_decided", decided: "approved" },
    ]);
    expect(t.runs.filter((r) => r === "transfer 50")).toHaveLength(1);
  });

  it("only the task's owner can decide", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { id } = await askForTransfer(h);
    expect(await h.gateway.decide(id, "mallory", "approve")).toEqual({ status: "not_owner" });
    expect(await h.say(`/approve ${id}`, { user: "mallory" })).toEqual(["switchboard: Only the person who started this task can approve or deny its tool calls."]);
    expect(t.runs).toEqual(["balance"]);
    expect((await h.store.approvals.get(id))?.status).toBe("pending");
  });

  it("answers new messages with a reminder while the approval is pending, without calling the model", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { id } = await askForTransfer(h);
    expect(await h.say("hello?")).toEqual([`switchboard: I'm waiting for your approval of transfer (${id}). Approve or deny it first, or send /cancel.`]);
    expect(h.fake.calls).toHaveLength(1);
  });

  it("no decision before APPROVAL_TIMEOUT counts as a denial, and the user is told", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list, approvalTimeoutMs: 60_000 });
    const { id } = await askForTransfer(h);
    expect(await h.gateway.expireApprovals(Date.now())).toBe(0);
    h.fake.script((req) => {
      expect(toolResults(req)[1]).toEqual({ id: "toolu_t", content: "no one approved this call in time, so it was treated as denied", error: true });
      return text("The transfer was not approved in time.");
    });
    expect(await h.gateway.expireApprovals(Date.now() + 61_000)).toBe(1);
    await h.gateway.idle();
    expect(h.seen.slice(-2).map((m) => m.text)).toEqual([
      `Nobody approved transfer (${id}) in time, so I treated it as denied.`,
      "The transfer was not approved in time.",
    ]);
    expect(await h.gateway.decide(id, "alice", "approve")).toEqual({ status: "already_decided", decided: "expired" });
    expect(t.runs).toEqual(["balance"]);
  });

  it("a decision and the resume it needs are written together: if one fails, neither happens", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { id } = await askForTransfer(h);
    // The store writes the resume inside the decision's transaction (requests.insertNow): make that insert fail.
    const store = h.store.requests as unknown as { insertNow: (...args: unknown[]) => unknown };
    const real = store.insertNow.bind(store);
    store.insertNow = () => {
      throw new Error("disk I/O error");
    };
    await expect(h.gateway.decide(id, "alice", "approve")).rejects.toThrow("disk I/O error");
    store.insertNow = real;
    expect((await h.store.approvals.get(id))?.status).toBe("pending");
    h.fake.script(text("Sent."));
    expect(await h.gateway.decide(id, "alice", "approve")).toMatchObject({ status: "approved" });
    await h.gateway.idle();
    expect(t.runs).toEqual(["balance", "transfer 50"]);
  });

  it("a call waiting for approval beside complete in the same message is closed with the frame", async () => {
    // Found by the simulation: the waiting call was left without a result when the child completed.
    const t = bankTools();
    h = await startHarness({ tools: t.list, files: agentFile("banker", "Bank.") });
    h.fake.script(
      reply(toolUse("use_agent", { name: "banker", message: "pay" }, "toolu_spawn")),
      reply(toolUse("transfer", { amount: 5 }, "toolu_pay"), toolUse("complete", { result: "done" })),
      text("ok"),
    );
    await h.send("go");
    const results = (await h.store.steps.log("console:t")).filter((e) => e.type === "tool_result").map((e) => e.payload as { tool_use_id: string; content: string });
    expect(results.find((r) => r.tool_use_id === "toolu_pay")?.content).toBe("not run: agent:banker finished in the same message");
    expect(t.runs).toEqual([]);
  });

  it("a batch run cannot wait for approval: the call is closed and the caller gets an error", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list, files: agentFile("banker", "Bank.", "mode: batch\n") });
    h.fake.script(reply(toolUse("call_agent", { agent: "banker", message: "pay" }, "toolu_call")), reply(toolUse("transfer", { amount: 5 }, "toolu_pay")), (req) => {
      expect(JSON.stringify(req.messages.at(-1))).toContain("needs approval of transfer, which a batch run cannot wait for");
      return text("I could not pay without you.");
    });
    await h.send("go");
    const answered = (await h.store.steps.log("console:t")).filter((e) => e.type === "tool_result").map((e) => (e.payload as { tool_use_id: string }).tool_use_id);
    expect(answered).toContain("toolu_pay");
    expect(t.runs).toEqual([]);
  });

  it("/cancel closes pending approvals, so a late click does nothing", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { id } = await askForTransfer(h);
    await h.send("/cancel");
    expect(await h.gateway.decide(id, "alice", "approve")).toMatchObject({ status: "already_decided" });
    await h.gateway.idle();
    expect(t.runs).toEqual(["balance"]);
  });

  it("an approval belongs to its session: another user's identical call with the same tool_use id is asked again", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const call = () => reply(toolUse("transfer", { amount: 500, to: "mallory" }, "toolu_replayed"));
    h.fake.script(call());
    const [mine] = (await h.send("pay mallory 500", { session: "alice-dm" })).filter((m) => m.approvalId);
    h.fake.script(text("Paid."));
    await h.gateway.decide(mine!.approvalId!, "alice", "approve");
    await h.gateway.idle();
    expect(t.runs).toEqual(["transfer 500"]);

    // The model repeats the very same call (same id, tool and input) for Bob in his own chat.
    h.fake.script(call());
    const [theirs] = (await h.send("pay mallory 500", { session: "bob-dm", user: "bob" })).filter((m) => m.approvalId);
    expect(t.runs).toEqual(["transfer 500"]);
    expect(theirs?.approvalId).not.toBe(mine!.approvalId);
    expect(await h.store.approvals.get(theirs!.approvalId!)).toMatchObject({ sessionKey: "console:bob-dm", ownerId: "bob", status: "pending" });
    expect(await h.gateway.decide(theirs!.approvalId!, "alice", "approve")).toEqual({ status: "not_owner" });
  });

  it("an approval belongs to its task: the same call in a later task of the same chat is asked again", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const call = () => reply(toolUse("transfer", { amount: 20 }, "toolu_again"));
    h.fake.script(call());
    const [first] = (await h.send("pay 20", { session: "group" })).filter((m) => m.approvalId);
    h.fake.script(text("Paid 20."));
    await h.gateway.decide(first!.approvalId!, "alice", "approve");
    await h.gateway.idle();
    expect(await h.store.tasks.active("console:group")).toBeNull();

    h.fake.script(call());
    const [second] = (await h.send("pay 20 for me too", { session: "group", user: "bob" })).filter((m) => m.approvalId);
    expect(second?.approvalId).toBeDefined();
    expect(t.runs).toEqual(["transfer 20"]);
    const approval = await h.store.approvals.get(second!.approvalId!);
    expect(approval).toMatchObject({ ownerId: "bob", status: "pending", taskId: (await h.store.tasks.active("console:group"))?.id });
  });

  it("an approval names the request whose turn it paused", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list });
    const { prompt, id } = await askForTransfer(h);
    expect((await h.store.approvals.get(id))?.requestId).toBe(prompt.requestId);
    expect((await h.store.requests.get(prompt.requestId!))?.text).toBe("send Bob 50");
  });

  it("fails closed: a definition that asks approval for a tool, or cannot be read any more, gates its calls", async () => {
    const t = bankTools();
    h = await startHarness({ tools: t.list, files: agentFile("banker", "Bank.", "requires_approval: [balance]\n") });
    h.fake.script(reply(toolUse("use_agent", { name: "banker", message: "check" })), reply(toolUse("balance", {}, "toolu_bb")));
    const shown = await h.send("check my balance");
    expect(shown.at(-1)?.text).toMatch(/^🔐 agent:banker wants to run balance/);
    expect(t.runs).toEqual([]);
  });
});

describe("approvals across a restart", () => {
  let fake: FakeAnthropic;
  let dir: string;
  afterEach(async () => {
    await fake?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("a decision made after a restart still works, once", async () => {
    fake = await startFakeAnthropic();
    dir = mkdtempSync(join(tmpdir(), "switchboard-approvals-"));
    const t = bankTools();
    const options: HarnessOptions = { tools: t.list, fake, dbFile: join(dir, "db.sqlite") };
    const first = await startHarness(options);
    const { id } = await askForTransfer(first);
    await first.close();

    h = await startHarness(options);
    fake.script(text("Sent after the restart."));
    expect(await h.gateway.decide(id, "alice", "approve")).toMatchObject({ status: "approved" });
    await h.gateway.idle();
    expect(h.seen.at(-1)?.text).toBe("Sent after the restart.");
    expect(t.runs).toEqual(["balance", "transfer 50"]);
  });
});
