// Writing a statement's values in as literals (statement-batch.ts): what reaches PostgreSQL must mean exactly what
// a bound parameter would, whatever the text holds. The round trip through a live server is in the step contract
// ("keeps text that looks like SQL…"); these pin the literals themselves and the refusals.
import { describe, expect, it } from "vitest";
import { fencedCurrent, FENCED_SQLSTATE, inline } from "../../../src/store/postgres/statement-batch.js";

describe("inline: values as SQL literals", () => {
  const sql = (text: string, values: unknown[]) => inline(text, values);

  it("quotes text, doubles its quotes and writes NULL for null", () => {
    expect(sql("SELECT $1, $2", ["it's", null])).toBe("SELECT 'it''s', NULL");
  });

  it("replaces $10 as itself, not as $1 followed by 0", () => {
    const values = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
    expect(sql("$1 $10", values)).toBe("'v1' 'v10'");
  });

  // (pg.escapeLiteral writes a backslash-bearing string as E'…', with a space before it.)
  it("writes arrays as quoted array literals, elements escaped, nulls bare", () => {
    expect(sql("$1::text[]", [['a"b', "c\\d", null, "x,y", 7]])).toBe(String.raw` E'{"a\\"b","c\\\\d",NULL,"x,y","7"}'::text[]`);
  });

  it("does not read placeholders inside the values it writes", () => {
    expect(sql("SELECT $1, $2", ["$2", "x"])).toBe("SELECT '$2', 'x'");
  });

  it("refuses what it cannot write exactly: a missing value, a non-finite number, a nested array, an object", () => {
    expect(() => sql("SELECT $2", ["only one"])).toThrow(/needs \$2 but was given 1 values/);
    expect(() => sql("SELECT $1", [Number.NaN])).toThrow(/not a finite number/);
    expect(() => sql("SELECT $1", [[["nested"]]])).toThrow(/nested arrays/);
    expect(() => sql("SELECT $1", [{ a: 1 }])).toThrow(/cannot write a object/);
  });

  it("reads the current token from the fence's error, and nothing from other errors", () => {
    expect(fencedCurrent({ code: FENCED_SQLSTATE, detail: "7" })).toBe(7);
    expect(fencedCurrent({ code: FENCED_SQLSTATE, detail: "" })).toBeNull();
    expect(fencedCurrent({ code: "23505" })).toBeUndefined();
  });
});
