// A live database's schema as its catalog tells it (SQLite: sqlite_master and the table/index pragmas; PostgreSQL:
// information_schema and pg_indexes), in one neutral shape, so the two dialects and the description in
// src/store/schema.ts can be compared.
import type Database from "better-sqlite3";
import type pg from "pg";

export interface LiveColumn {
  /** The type as the catalog names it, lower case (`text`, `integer`, `bigint`, `tsvector`). */
  type: string;
  nullable: boolean;
}

export interface LiveIndex {
  table: string;
  /** The indexed columns or expressions, normalised (`session_key, seq`; `coalesce(task_id, '')`). */
  on: string;
  unique: boolean;
  /** The partial index's predicate, normalised; null when the index is whole. */
  where: string | null;
}

export interface LiveSchema {
  tables: Record<string, Record<string, LiveColumn>>;
  /** Named indexes (created by CREATE INDEX), by name. */
  indexes: Record<string, LiveIndex>;
  /** Primary keys and UNIQUE constraints, as `table(col, col)`, sorted. */
  keys: string[];
}

/** Lower case, no casts, no redundant parentheses or quotes, one space after commas: one spelling per predicate. */
export function normalise(sql: string): string {
  let s = sql
    .toLowerCase()
    .replace(/::[a-z_ ]+(\[\])?/g, "") // PostgreSQL casts: 'pending'::text
    .replace(/"/g, "")
    .replace(/\s+/g, " ")
    .trim();
  // PostgreSQL writes `x IN ('a', 'b')` as `x = ANY (ARRAY['a', 'b'])`.
  s = s.replace(/= any \(array\[([^\]]*)\]\)/g, "in ($1)");
  for (;;) {
    const stripped = s.replace(/\(\s*([^()]*)\s*\)/g, (whole, inner: string, offset: number, all: string) => {
      // Keep the parentheses of a call (`coalesce(…)`) and of an IN list; drop the rest.
      const before = all.slice(0, offset);
      return /([a-z_]|\bin ?)$/.test(before) ? `⟨${inner}⟩` : inner;
    });
    if (stripped === s) break;
    s = stripped;
  }
  return s
    .replace(/⟨/g, "(")
    .replace(/⟩/g, ")")
    .replace(/\s*,\s*/g, ", ")
    .replace(/\s+/g, " ")
    .replace(/\( /g, "(")
    .replace(/ \)/g, ")")
    .trim();
}

/** `CREATE [UNIQUE] INDEX name ON table [USING method] (on) [WHERE where]`, its parts (the column list balanced). */
function indexParts(sql: string): { unique: boolean; method: string; on: string; where: string | null } | null {
  const head = /^CREATE (UNIQUE )?INDEX \S+ ON \S+\s*(?:USING (\w+)\s*)?\(/i.exec(sql.trim());
  if (!head) return null;
  const text = sql.trim();
  let depth = 1;
  let i = head[0].length;
  for (; i < text.length && depth > 0; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")") depth--;
  }
  if (depth !== 0) return null;
  const rest = text.slice(i).trim();
  const where = /^WHERE\s+([\s\S]*)$/i.exec(rest);
  if (rest !== "" && !where) return null;
  return { unique: head[1] !== undefined, method: (head[2] ?? "btree").toLowerCase(), on: text.slice(head[0].length, i - 1), where: where ? where[1]! : null };
}

export function readSqliteSchema(db: Database.Database): LiveSchema {
  const schema: LiveSchema = { tables: {}, indexes: {}, keys: [] };
  const objects = db.prepare(`SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name`).all() as Array<{
    type: string;
    name: string;
    tbl_name: string;
    sql: string | null;
  }>;
  for (const table of objects.filter((o) => o.type === "table")) {
    const columns = db.prepare(`SELECT name, type, "notnull", pk FROM pragma_table_xinfo(?) WHERE hidden = 0`).all(table.name) as Array<{
      name: string;
      type: string;
      notnull: number;
      pk: number;
    }>;
    schema.tables[table.name] = Object.fromEntries(columns.map((c) => [c.name, { type: c.type.toLowerCase(), nullable: c.notnull === 0 && c.pk === 0 }]));
    const pk = columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
    if (pk.length > 0) schema.keys.push(`${table.name}(${pk.map((c) => c.name).join(", ")})`);
    const list = db.prepare(`SELECT name, "unique", origin FROM pragma_index_list(?)`).all(table.name) as Array<{ name: string; unique: number; origin: string }>;
    for (const index of list.filter((i) => i.origin === "u")) {
      const cols = db.prepare(`SELECT name FROM pragma_index_info(?) ORDER BY seqno`).all(index.name) as Array<{ name: string }>;
      schema.keys.push(`${table.name}(${cols.map((c) => c.name).join(", ")})`);
    }
  }
  for (const index of objects.filter((o) => o.type === "index" && o.sql !== null)) {
    const parts = indexParts(index.sql!);
    if (!parts) throw new Error(`cannot read the SQLite index ${index.name}: ${index.sql}`);
    schema.indexes[index.name] = { table: index.tbl_name, on: normalise(parts.on), unique: parts.unique, where: parts.where ? normalise(parts.where) : null };
  }
  schema.keys.sort();
  return schema;
}

export async function readPostgresSchema(client: pg.ClientBase): Promise<LiveSchema> {
  const schema: LiveSchema = { tables: {}, indexes: {}, keys: [] };
  const { rows: columns } = await client.query<{ table_name: string; column_name: string; data_type: string; is_nullable: string }>(
    `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable
       FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  for (const c of columns) {
    (schema.tables[c.table_name] ??= {})[c.column_name] = { type: c.data_type.toLowerCase(), nullable: c.is_nullable === "YES" };
  }
  const { rows: keys } = await client.query<{ table_name: string; columns: string }>(
    `SELECT tc.table_name, string_agg(k.column_name, ', ' ORDER BY k.ordinal_position) AS columns
       FROM information_schema.table_constraints tc
       JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name, table_name)
      WHERE tc.table_schema = current_schema() AND tc.constraint_type IN ('PRIMARY KEY', 'UNIQUE')
      GROUP BY tc.table_name, tc.constraint_name`,
  );
  schema.keys = keys.map((k) => `${k.table_name}(${k.columns})`).sort();
  const { rows: indexes } = await client.query<{ tablename: string; indexname: string; indexdef: string }>(
    `SELECT i.tablename, i.indexname, i.indexdef FROM pg_indexes i
      WHERE i.schemaname = current_schema()
        AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = current_schema()::regnamespace)
      ORDER BY i.indexname`,
  );
  for (const index of indexes) {
    const parts = indexParts(index.indexdef);
    if (!parts) throw new Error(`cannot read the PostgreSQL index ${index.indexname}: ${index.indexdef}`);
    const method = parts.method === "btree" ? "" : ` using ${parts.method}`;
    schema.indexes[index.indexname] = {
      table: index.tablename,
      on: normalise(parts.on) + method,
      unique: parts.unique,
      where: parts.where ? normalise(parts.where) : null,
    };
  }
  return schema;
}
