// What each dialect's catalog must show, derived from the one description (src/store/schema.ts), and the
// differences between a live schema and it.
import { DIALECT_ONLY, TABLES, type ColumnDescription, type TableDescription } from "../../../src/store/schema.js";
import type { LiveSchema } from "./catalog.js";

export type Dialect = "sqlite" | "postgres";

const TYPES: Record<Dialect, Record<ColumnDescription["type"], string>> = {
  sqlite: { text: "text", int: "integer", bigint: "integer", blob: "blob" },
  postgres: { text: "text", int: "integer", bigint: "bigint", blob: "bytea" },
};

const described = TABLES as Record<string, TableDescription>;

/** The columns SQLite keeps as the rowid of `table`. */
function rowidColumns(table: TableDescription): Set<string> {
  return new Set(
    Object.entries(table.columns)
      .filter(([, c]) => c.sqlite === "rowid")
      .map(([name]) => name),
  );
}

/** The schema `dialect` must have, the declared dialect-only objects aside. */
export function expectedSchema(dialect: Dialect): LiveSchema {
  const schema: LiveSchema = { tables: {}, indexes: {}, keys: [] };
  for (const [name, table] of Object.entries(described)) {
    const rowid = dialect === "sqlite" ? rowidColumns(table) : new Set<string>();
    schema.tables[name] = Object.fromEntries(
      Object.entries(table.columns)
        .filter(([column]) => !rowid.has(column))
        .map(([column, c]) => [column, { type: TYPES[dialect][c.type], nullable: c.notNull !== true }]),
    );
    for (const key of table.keys) if (!rowid.has(key)) schema.keys.push(`${name}(${key})`);
    for (const [index, i] of Object.entries(table.indexes)) {
      // SQLite ends every index with the rowid: an index ending with the rowid column says it without it.
      const last = i.on.split(", ").at(-1)!;
      const on = rowid.has(last) ? i.on.split(", ").slice(0, -1).join(", ") : i.on;
      schema.indexes[index] = { table: name, on, unique: i.unique === true, where: i.where ?? null };
    }
  }
  schema.keys.sort();
  return schema;
}

/** Every difference between `live` and the description, one line each; the declared dialect-only objects are left out. */
export function differences(dialect: Dialect, live: LiveSchema): string[] {
  const expected = expectedSchema(dialect);
  const only = DIALECT_ONLY[dialect];
  const ownTables = new Set(Object.keys(only.tables));
  const ownColumns = new Set(Object.keys(only.columns));
  const ownIndexes = new Set(Object.keys(only.indexes));
  const ownKeys = new Set<string>(Object.keys(only.keys));
  const out: string[] = [];
  const tables = new Set([...Object.keys(expected.tables), ...Object.keys(live.tables)]);
  for (const table of [...tables].sort()) {
    if (ownTables.has(table)) {
      if (!live.tables[table]) out.push(`table ${table}: declared ${dialect}-only, but missing`);
      continue;
    }
    const want = expected.tables[table];
    const have = live.tables[table];
    if (!want || !have) {
      out.push(`table ${table}: ${want ? "missing" : "not in the description"}`);
      continue;
    }
    for (const column of [...new Set([...Object.keys(want), ...Object.keys(have)])].sort()) {
      if (ownColumns.has(`${table}.${column}`)) continue;
      const w = want[column];
      const h = have[column];
      if (!w || !h) out.push(`column ${table}.${column}: ${w ? "missing" : "not in the description"}`);
      else if (w.type !== h.type || w.nullable !== h.nullable) {
        out.push(`column ${table}.${column}: ${h.type}${h.nullable ? "" : " not null"}, described ${w.type}${w.nullable ? "" : " not null"}`);
      }
    }
  }
  const inOwnTable = (key: string) => ownTables.has(key.slice(0, key.indexOf("(")));
  const liveKeys = live.keys.filter((k) => !inOwnTable(k) && !ownKeys.has(k));
  for (const key of expected.keys.filter((k) => !liveKeys.includes(k))) out.push(`key ${key}: missing`);
  for (const key of liveKeys.filter((k) => !expected.keys.includes(k))) out.push(`key ${key}: not in the description`);
  const indexes = new Set([...Object.keys(expected.indexes), ...Object.keys(live.indexes)]);
  for (const index of [...indexes].sort()) {
    if (ownIndexes.has(index)) continue;
    const w = expected.indexes[index];
    const h = live.indexes[index];
    if (h && ownTables.has(h.table)) continue;
    if (!w || !h) out.push(`index ${index}: ${w ? "missing" : "not in the description"}`);
    else if (JSON.stringify(w) !== JSON.stringify(h)) out.push(`index ${index}: ${JSON.stringify(h)}, described ${JSON.stringify(w)}`);
  }
  return out;
}
