import type { ApiReads } from "../../src/gateway/index.js";
import { HttpError } from "./request.js";
import { memoryView } from "./views.js";

// The caller's long-term memories: GET /v1/memories lists them, DELETE /v1/memories/{id} forgets one,
// DELETE /v1/memories forgets them all. Only ever the authenticated user's own: another user's id is a 404 exactly
// like an unknown one, so ids cannot be probed.

/** What a memory handler answers; no body means 204. */
export type MemoryAnswer = { status: number; body?: unknown };

/** Ids are the gateway's own (UUIDs, `mem_…`): anything else is a client's mistake, told before the store is asked. */
const MEMORY_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

/** GET /v1/memories: the user's memories. */
export async function listMemories(store: ApiReads, user: string): Promise<MemoryAnswer> {
  return { status: 200, body: { memories: (await store.memories(user)).map(memoryView) } };
}

/** DELETE /v1/memories: forgets them all. */
export async function forgetMemories(store: ApiReads, user: string): Promise<MemoryAnswer> {
  return { status: 200, body: { deleted: await store.forgetMemories(user) } };
}

/** DELETE /v1/memories/{id}: forgets one (`id` as sent). */
export async function forgetMemory(store: ApiReads, id: string, user: string): Promise<MemoryAnswer> {
  if (!MEMORY_ID.test(id)) {
    throw new HttpError(400, "invalid_request_error", "memory id must be 1-128 letters, digits, '_', '-' or '.' (as GET /v1/memories lists it)");
  }
  // The store deletes only `user`'s own: 0 means unknown here, whoever's it may be.
  if ((await store.forgetMemories(user, [id])) === 0) throw new HttpError(404, "not_found_error", `no memory ${id}`);
  return { status: 204 };
}
