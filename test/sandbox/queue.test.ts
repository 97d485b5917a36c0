// The sandbox's slots: a cap on commands running at once, a bounded wait, and turns taken by key (session), so
// one session's batch of commands does not hold up everybody else's.
import { describe, expect, it } from "vitest";
import { FairQueue, type Admission } from "../../src/sandbox/queue.js";

function clock() {
  let now = 1000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}

const slot = (a: Admission) => {
  if (!a.ok) throw new Error(a.reason);
  return a.slot;
};

describe("FairQueue", () => {
  it("runs up to its cap at once, then makes calls wait, and says how long they waited", async () => {
    const time = clock();
    const queue = new FairQueue(2, 10, time);
    const first = slot(await queue.acquire("alice"));
    const second = slot(await queue.acquire("bob"));
    expect([first.waitedMs, second.waitedMs]).toEqual([0, 0]);
    let third: number | null = null;
    const waiting = queue.acquire("carol").then((a) => (third = slot(a).waitedMs));
    await Promise.resolve();
    expect(third).toBeNull();
    expect(queue.load()).toEqual({ running: 2, queued: 1 });
    time.advance(4200);
    first.release();
    await waiting;
    expect(third).toBe(4200);
  });

  it("gives a freed slot to the next session in turn, not to the session that queued the most", async () => {
    const queue = new FairQueue(1, 10, clock());
    const running = slot(await queue.acquire("alice"));
    const order: string[] = [];
    const calls = [
      ["alice", "alice-2"],
      ["alice", "alice-3"],
      ["alice", "alice-4"],
      ["bob", "bob-1"],
      ["carol", "carol-1"],
    ].map(([key, name]) =>
      queue.acquire(key!).then((a) => {
        order.push(name!);
        slot(a).release();
      }),
    );
    running.release();
    await Promise.all(calls);
    expect(order).toEqual(["alice-2", "bob-1", "carol-1", "alice-3", "alice-4"]);
  });

  it("refuses a call at once when the wait queue is full", async () => {
    const queue = new FairQueue(1, 1, clock());
    slot(await queue.acquire("alice"));
    void queue.acquire("bob");
    expect(await queue.acquire("carol")).toEqual({
      ok: false,
      reason: "the sandbox is busy: 1 commands are running and 1 are waiting (at most 1); try again in a moment",
    });
  });

  it("takes a cancelled call out of the queue: it never runs and holds no place", async () => {
    const queue = new FairQueue(1, 1, clock());
    const running = slot(await queue.acquire("alice"));
    const cancel = new AbortController();
    const cancelled = queue.acquire("bob", cancel.signal);
    cancel.abort(new Error("/cancel"));
    await expect(cancelled).rejects.toThrow("/cancel");
    expect(queue.load()).toEqual({ running: 1, queued: 0 });
    const next = queue.acquire("carol");
    running.release();
    expect(slot(await next).waitedMs).toBe(0);
    expect(queue.load()).toEqual({ running: 1, queued: 0 });
  });

  it("counts a released slot once, however often it is released", async () => {
    const queue = new FairQueue(1, 5, clock());
    const a = slot(await queue.acquire("alice"));
    a.release();
    a.release();
    expect(queue.load()).toEqual({ running: 0, queued: 0 });
  });
});
