// Contract: what one user keeps on the server (the HTTP API's per-user caps) — the sessions they own, and the bytes
// of those sessions' context logs plus their memories, in bytes (not characters).
import { expect, it } from "vitest";
import { ALICE, BOB, logEntry, newRequest, type ContractContext } from "./fixtures.js";
import { commitStep } from "../../helpers/steps.js";

export function footprintContract(ctx: ContractContext): void {
  it("counts the sessions a user owns and the bytes of their logs and memories, not other users' nor shared chats", async () => {
    const { store } = ctx;
    const payloads = [
      { role: "user", content: "Grüße aus Zürich" },
      { role: "assistant", content: "¡Hola! 👋" },
    ];
    const bytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value), "utf8");
    for (const [n, key, user] of [
      ["1", "http:a1", ALICE],
      ["2", "http:a2", ALICE],
      ["3", "http:b1", BOB],
    ] as const) {
      expect((await store.requests.insert(newRequest(`r${n}`, key, { userId: user, claimSession: { mainAgentSessionId: `as-${n}` } }))).status).toBe("inserted");
      await commitStep(store, { sessionKey: key, log: payloads.map((p) => logEntry("message", p, { requestId: `r${n}`, agentSessionId: `as-${n}` })) });
    }
    // A chat nobody owns where Alice writes too: not hers to be capped on.
    await store.requests.insert(newRequest("r4", "telegram:-100", { userId: ALICE }));
    await commitStep(store, { sessionKey: "telegram:-100", log: [logEntry("message", { role: "user", content: "hi all" }, { requestId: "r4" })] });
    await store.memories.save(ALICE, { add: [{ id: "m1", text: "Lives in Zürich.", kind: null }] });

    const logBytes = payloads.reduce((sum, p) => sum + bytes(p), 0);
    expect(await store.userData.footprint(ALICE)).toEqual({ sessions: 2, bytes: 2 * logBytes + Buffer.byteLength("Lives in Zürich.") });
    expect(await store.userData.footprint(BOB)).toEqual({ sessions: 1, bytes: logBytes });
    expect(await store.userData.footprint("http:nobody")).toEqual({ sessions: 0, bytes: 0 });
  });
}
