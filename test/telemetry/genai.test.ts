// The W3C traceparent a task keeps on its main frame is read back from the database: anything that is not exactly
// a version-00 traceparent with non-zero ids (a damaged row, an old value, hostile text) is ignored, never linked.
import { describe, expect, it } from "vitest";
import { createHash, createHmac } from "node:crypto";
import { parseTraceparent, sessionHasher, traceparentOf } from "../../src/telemetry/genai.js";

describe("traceparent", () => {
  const good = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

  it("round-trips a span context (the example of the W3C Trace Context spec)", () => {
    const ctx = parseTraceparent(good)!;
    expect(ctx).toEqual({ traceId: "0af7651916cd43dd8448eb211c80319c", spanId: "b7ad6b7169203331", traceFlags: 1, isRemote: true });
    expect(traceparentOf(ctx)).toBe(good);
  });

  it.each([
    undefined,
    "",
    "01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
    "00-00000000000000000000000000000000-b7ad6b7169203331-01",
    "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
    "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
    `${good}-extra`,
    `${good}\n`,
    "00-0af7651916cd43dd8448eb211c80319c-b7ad6b716920333-01",
    "<script>alert(1)</script>",
  ])("ignores %j", (value) => {
    expect(parseTraceparent(value)).toBeNull();
  });
});

it("a session key leaves only as a hash keyed by the deployment's secret, the same on every replica", () => {
  const replicaA = sessionHasher("deployment-secret-0123456789");
  const replicaB = sessionHasher("deployment-secret-0123456789");
  const elsewhere = sessionHasher("another-deployment-secret-42");
  expect(replicaA("telegram:123")).toMatch(/^[0-9a-f]{16}$/);
  expect(replicaA("telegram:123")).toBe(replicaB("telegram:123"));
  expect(replicaA("telegram:123")).not.toBe(replicaA("telegram:124"));
  expect(replicaA("telegram:123")).not.toBe(elsewhere("telegram:123"));
  // Not the plain digest anyone could compute for every chat id until one matches.
  expect(replicaA("telegram:123")).not.toBe(createHash("sha256").update("telegram:123").digest("hex").slice(0, 16));
  expect(replicaA("telegram:123")).toBe(createHmac("sha256", "deployment-secret-0123456789").update("telegram:123").digest("hex").slice(0, 16));
});
