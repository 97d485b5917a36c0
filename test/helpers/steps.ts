// Writing a session's state in tests the way a replica does: from a lease the store granted.
import type { SessionWriter, StepCommit, Store } from "../../src/store/store.js";

/** The holder tests write under when they set a session up by hand. */
export const TEST_WRITER = "test-writer";

/**
 * The writer of `sessionKey` for `holder`: takes its lease (for a minute). Throws when another holder's lease is
 * live, naming it: write under that holder's writer instead.
 */
export async function writerFor(store: Pick<Store, "leases" | "steps">, sessionKey: string, holder = TEST_WRITER): Promise<SessionWriter> {
  const lease = await store.leases.acquire(sessionKey, holder, 60_000);
  if (!lease) {
    const current = await store.leases.get(sessionKey);
    throw new Error(`test setup: ${sessionKey} is leased to ${current?.holder ?? "someone"}; commit through that holder's writer`);
  }
  return store.steps.writer(lease);
}

/**
 * Commits one step of `sessionKey` as a replica would (takes the session's lease, writes under it, lets it go):
 * how tests put a conversation's state in place.
 */
export async function commitStep(store: Pick<Store, "leases" | "steps">, step: StepCommit & { sessionKey: string }): Promise<void> {
  const { sessionKey, ...rest } = step;
  const writer = await writerFor(store, sessionKey);
  try {
    await writer.commit(rest);
  } finally {
    await store.leases.release(sessionKey, writer.fence.holder, writer.fence.token);
  }
}

/**
 * Makes every step commit of `store` fail with `error` (a full disk), until the returned function is called: the
 * writers made meanwhile fail too until then, like a disk that has no room and then has some again.
 */
export function failCommits(store: Pick<Store, "steps">, error: Error): () => void {
  let failing = true;
  const writer = store.steps.writer.bind(store.steps);
  store.steps.writer = (lease) => {
    const real = writer(lease);
    return { sessionKey: real.sessionKey, fence: real.fence, commit: (step) => (failing ? Promise.reject(error) : real.commit(step)) };
  };
  return () => {
    failing = false;
    store.steps.writer = writer;
  };
}
