// The memory secret filter on the ways people really write credentials down. tuning.json is what the filter was
// built against: every phrasing must be classified right. held-out.json was written before the filter and never
// used to tune it: its figure is a floor that must not drop (raise the floor when the filter gets better on it,
// never edit the list to fit the filter).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { holdsSecret } from "../../src/runtime/memory/secrets.js";

interface Phrasing {
  lang: string;
  secret: boolean;
  text: string;
}

const load = (name: string): Phrasing[] =>
  (JSON.parse(readFileSync(new URL(`../fixtures/memory-secrets/${name}`, import.meta.url), "utf8")) as { phrasings: Phrasing[] }).phrasings;

function score(phrasings: Phrasing[]) {
  const wrong = phrasings.filter((p) => holdsSecret(p.text) !== p.secret);
  const secrets = phrasings.filter((p) => p.secret);
  return {
    caught: secrets.filter((p) => holdsSecret(p.text)).length,
    secrets: secrets.length,
    kept: phrasings.filter((p) => !p.secret && !holdsSecret(p.text)).length,
    benign: phrasings.length - secrets.length,
    wrong: wrong.map((p) => `${p.secret ? "missed" : "refused"} (${p.lang}): ${p.text}`),
  };
}

describe("memory secret filter", () => {
  it("refuses every credential of the tuning list and keeps every fact that only mentions one, in en, de, fr and es", () => {
    const phrasings = load("tuning.json");
    expect(new Set(phrasings.map((p) => p.lang))).toEqual(new Set(["en", "de", "fr", "es"]));
    expect(score(phrasings).wrong).toEqual([]);
  });

  it("on the held-out list: at least 29 of 36 credentials refused (29 of the 31 in en/de/fr/es; it/pt/nl are not covered), every fact kept", () => {
    const phrasings = load("held-out.json");
    const all = score(phrasings);
    const covered = score(phrasings.filter((p) => ["en", "de", "fr", "es"].includes(p.lang)));
    expect({ secrets: all.secrets, benign: all.benign }).toEqual({ secrets: 36, benign: 16 });
    expect(all.caught, all.wrong.join("\n")).toBeGreaterThanOrEqual(29);
    expect(covered.caught, covered.wrong.join("\n")).toBeGreaterThanOrEqual(29);
    expect(all.kept, all.wrong.join("\n")).toBe(16);
  });

  it("still refuses credential formats and card numbers wherever they appear", () => {
    for (const text of [
      "Deploy key sk-ant-api03-abcdefghijklmnopqrstuv",
      "Slack bot xoxb-1234567890-abcdefghij",
      "Card 4111 1111 1111 1111",
      "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjE",
      "Token ghp_abcdefghijklmnopqrstuvwxyz0123",
    ]) {
      expect(holdsSecret(text), text).toBe(true);
    }
    expect(holdsSecret("Order number 4111 1111 1111 1112")).toBe(false);
  });
});
