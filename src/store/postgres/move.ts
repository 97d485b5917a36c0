// moveSession on PostgreSQL: a conversation (the key and every `<key>:…` sub-key) moves to another key, every
// row with it, inside the caller's transaction. Rare (a Telegram group becoming a supergroup), so plain
// statements, not prepared ones. Leases stay where they are, with a new fencing token each (below); the new key
// gets its own when a replica next takes it.
import type pg from "pg";
import { SESSION_TABLES } from "../schema.js";

const under = (column: string) => `(${column} = $1::text OR starts_with(${column}, $1::text || ':'))`;
const renamed = (column: string) => `$2::text || substr(${column}, length($1::text) + 1)`;

export async function moveSession(client: pg.ClientBase, from: string, to: string): Promise<{ moved: number } | { refused: string }> {
  const keys = await client.query<{ key: string }>(`SELECT key FROM sessions WHERE ${under("key")} ORDER BY key FOR UPDATE`, [from]);
  // The new chat may already have sessions of its own (a message got there first): fine while they hold no work.
  const targets = await client.query<{ key: string; busy: boolean }>(
    `SELECT t.key,
       EXISTS (SELECT 1 FROM tasks WHERE session_key = t.key AND status IN ('running', 'waiting_user', 'waiting_approval'))
       OR EXISTS (SELECT 1 FROM frames WHERE session_key = t.key) AS busy
     FROM sessions s JOIN sessions t ON t.key = ${renamed("s.key")}
     WHERE ${under("s.key")} ORDER BY t.key`,
    [from, to],
  );
  const busy = targets.rows.find((t) => t.busy);
  if (busy) return { refused: `${busy.key} already has a conversation under way` };
  const idle = targets.rows.map((t) => t.key);
  if (idle.length > 0) {
    await client.query(`DELETE FROM sessions WHERE key = ANY($1::text[])`, [idle]);
    await client.query(`DELETE FROM indicators WHERE session_key = ANY($1::text[])`, [idle]);
  }
  // A request of the new key's idle conversation may share an external id with one moving in (ids unique per
  // chat only): the moving one keeps its identity under a prefixed id, so both stay and neither is lost.
  await client.query(
    `UPDATE requests SET external_id = 'moved:' || session_key || ':' || external_id WHERE ${under("session_key")}
     AND EXISTS (SELECT 1 FROM requests b WHERE b.session_key = ${renamed("requests.session_key")} AND b.external_id = requests.external_id)`,
    [from, to],
  );
  for (const table of SESSION_TABLES) {
    await client.query(`UPDATE ${table} SET session_key = ${renamed("session_key")} WHERE ${under("session_key")}`, [from, to]);
  }
  await client.query(`UPDATE sessions SET key = ${renamed("key")} WHERE ${under("key")}`, [from, to]);
  // A new fencing token on both sides: a step under way on the old key is refused, and whoever held either key
  // forgets what it cached of it (holder-cache.ts) at its next grant.
  await client.query(`UPDATE leases SET token = token + 1, expires_at = 0 WHERE ${under("key")} OR key = $2::text OR starts_with(key, $2::text || ':')`, [from, to]);
  return { moved: keys.rows.length };
}
