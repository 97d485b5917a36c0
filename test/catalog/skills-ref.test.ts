// The Agent Skills reference validator's own test cases, ported as data: inputs and verdicts from
//   github.com/agentskills/agentskills @ 69ef37e9424c0a7ea9dd2293b559e43ec8176379
//   skills-ref/tests/test_validator.py (21 cases) and skills-ref/tests/test_parser.py (15 cases)
//   (both last changed in 547831f3a23724ba64a9b79bbf59c5e0bc8f2d1a).
// The validator's cases run through `validate` (strict), the parser's through the gateway's loader (lenient).
// skills-ref/tests/test_prompt.py (4 cases) is not ported: it tests skills-ref's <available_skills> prompt XML,
// which Switchboard does not produce.
//
// Where we decide differently, the case says `differs` and why. In short:
// - Non-ASCII names (test_i18n_chinese_name, test_i18n_russian_name_with_hyphens, test_i18n_russian_lowercase_valid,
//   test_nfkc_normalization): refused. The spec's text says a-z and 0-9; the model types the name to call the skill,
//   and letters of other scripts can look identical to Latin ones (a skill dropped in as "rеsearch" with a Cyrillic
//   "е" would shadow "research" in the list the model reads).
// - Unknown top-level fields (test_unexpected_fields): a warning, not an error. Switchboard's own fields and other
//   hosts' are legitimate here; `validate` tells the admin what other hosts may refuse without failing their CI.
// - skill.md in lower case (test_find_skill_md_accepts_lowercase, test_read_properties_with_lowercase_skill_md): the
//   gateway loads it, as skills-ref's parser does, with a warning; `validate` refuses it, because the spec and the
//   client guide name the file SKILL.md and hosts on case-sensitive file systems do not find skill.md.
// - allowed-tools (test_read_with_allowed_tools): kept as two entries, not split inside the parentheses, then
//   translated into this gateway's tools; Bash has no equivalent here, so the whitelist is empty and a warning
//   names both entries as written.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Definition } from "../../src/catalog/definition.js";
import { loadCatalog } from "../../src/catalog/loader.js";
import { validatePath } from "../../src/catalog/validate.js";

type Verdict = "valid" | "invalid";

interface Case {
  /** The test's name in skills-ref. */
  test: string;
  /** Files under a temp folder; `target` is what skills-ref's validate() or read_properties() is given. */
  files: Record<string, string>;
  target: string;
  skillsRef: Verdict;
  /** Our verdict and the reason, where we deliberately decide otherwise. */
  differs?: { ours: Verdict; why: string };
  /** What our message says (the reason in our words). */
  says?: string;
}

const fm = (fields: string, body = "Body") => `---\n${fields}\n---\n${body}\n`;
const basic = (name: string, extra = "") => fm(`name: ${name}\ndescription: A test skill${extra}`);
const NON_ASCII = "names use the letters a-z only: the model types them, and letters of other scripts can look identical";

const VALIDATOR: Case[] = [
  { test: "test_valid_skill", files: { "my-skill/SKILL.md": basic("my-skill").replace("Body", "# My Skill") }, target: "my-skill", skillsRef: "valid" },
  { test: "test_nonexistent_path", files: {}, target: "nonexistent", skillsRef: "invalid", says: "no such file or folder" },
  // skills-ref wants a directory; `validate` also takes one definition file, and this one has no frontmatter.
  { test: "test_not_a_directory", files: { "file.txt": "test" }, target: "file.txt", skillsRef: "invalid", says: "missing YAML frontmatter" },
  { test: "test_missing_skill_md", files: { "my-skill/.keep": "" }, target: "my-skill", skillsRef: "invalid", says: "no SKILL.md in" },
  { test: "test_invalid_name_uppercase", files: { "MySkill/SKILL.md": basic("MySkill") }, target: "MySkill", skillsRef: "invalid", says: "lowercase" },
  {
    test: "test_name_too_long",
    files: { [`${"a".repeat(70)}/SKILL.md`]: basic("a".repeat(70)) },
    target: "a".repeat(70),
    skillsRef: "invalid",
    says: "70 characters; the limit is 64",
  },
  { test: "test_name_leading_hyphen", files: { "-my-skill/SKILL.md": basic("-my-skill") }, target: "-my-skill", skillsRef: "invalid", says: "not at the start or end" },
  { test: "test_name_consecutive_hyphens", files: { "my--skill/SKILL.md": basic("my--skill") }, target: "my--skill", skillsRef: "invalid", says: "single hyphens" },
  {
    test: "test_name_invalid_characters",
    files: { "my_skill/SKILL.md": basic("my_skill") },
    target: "my_skill",
    skillsRef: "invalid",
    says: "only lowercase letters, digits and single hyphens",
  },
  {
    test: "test_name_directory_mismatch",
    files: { "wrong-name/SKILL.md": basic("correct-name") },
    target: "wrong-name",
    skillsRef: "invalid",
    says: 'must equal the folder name "wrong-name"',
  },
  {
    test: "test_unexpected_fields",
    files: { "my-skill/SKILL.md": basic("my-skill", "\nunknown_field: should not be here") },
    target: "my-skill",
    skillsRef: "invalid",
    differs: { ours: "valid", why: "unknown fields are a portability warning: Switchboard's and other hosts' fields are legitimate here" },
    says: "unknown_field is not an Agent Skills field",
  },
  {
    test: "test_valid_with_all_fields",
    files: { "my-skill/SKILL.md": basic("my-skill", "\nlicense: MIT\nmetadata:\n  author: Test") },
    target: "my-skill",
    skillsRef: "valid",
  },
  // Valid for both; we add a warning that Bash has no equivalent in this gateway.
  {
    test: "test_allowed_tools_accepted",
    files: { "my-skill/SKILL.md": basic("my-skill", "\nallowed-tools: Bash(jq:*) Bash(git:*)") },
    target: "my-skill",
    skillsRef: "valid",
    says: "Bash(jq:*) and Bash(git:*) are Claude Code tools",
  },
  {
    test: "test_i18n_chinese_name",
    files: { "技能/SKILL.md": basic("技能").replace("A test skill", "A skill with Chinese name") },
    target: "技能",
    skillsRef: "valid",
    differs: { ours: "invalid", why: NON_ASCII },
    says: "only the letters a-z",
  },
  {
    test: "test_i18n_russian_name_with_hyphens",
    files: { "мой-навык/SKILL.md": basic("мой-навык") },
    target: "мой-навык",
    skillsRef: "valid",
    differs: { ours: "invalid", why: NON_ASCII },
    says: "only the letters a-z",
  },
  {
    test: "test_i18n_russian_lowercase_valid",
    files: { "навык/SKILL.md": basic("навык") },
    target: "навык",
    skillsRef: "valid",
    differs: { ours: "invalid", why: NON_ASCII },
    says: "only the letters a-z",
  },
  { test: "test_i18n_russian_uppercase_rejected", files: { "НАВЫК/SKILL.md": basic("НАВЫК") }, target: "НАВЫК", skillsRef: "invalid", says: "only the letters a-z" },
  {
    test: "test_description_too_long",
    files: { "my-skill/SKILL.md": fm(`name: my-skill\ndescription: ${"x".repeat(1100)}`) },
    target: "my-skill",
    skillsRef: "invalid",
    says: "1100 characters; the limit is 1024",
  },
  {
    test: "test_valid_compatibility",
    files: { "my-skill/SKILL.md": basic("my-skill", "\ncompatibility: Requires Python 3.11+") },
    target: "my-skill",
    skillsRef: "valid",
  },
  {
    test: "test_compatibility_too_long",
    files: { "my-skill/SKILL.md": basic("my-skill", `\ncompatibility: ${"x".repeat(550)}`) },
    target: "my-skill",
    skillsRef: "invalid",
    says: "550 characters; the limit is 500",
  },
  // The folder uses the composed "é" (U+00E9), the name the decomposed "e" + U+0301: equal after NFKC.
  {
    test: "test_nfkc_normalization",
    files: { "café/SKILL.md": basic("cafe\u0301") },
    target: "café",
    skillsRef: "valid",
    differs: { ours: "invalid", why: NON_ASCII },
    says: "only the letters a-z",
  },
  // The parser's lower-case case, asked of `validate` (the loader's side is below).
  {
    test: "test_find_skill_md_accepts_lowercase (validate)",
    files: { "my-skill/skill.md": basic("my-skill") },
    target: "my-skill",
    skillsRef: "valid",
    differs: { ours: "invalid", why: "the spec names the file SKILL.md; hosts on case-sensitive file systems do not find skill.md" },
    says: "rename skill.md to SKILL.md",
  },
];

interface ParserCase {
  test: string;
  /** Files under skills/ of a temp folder. */
  files: Record<string, string>;
  skillsRef: "parses" | "refuses";
  differs?: { why: string };
  /** What the loaded skill holds, or what the refusal says. */
  check: (loaded: Definition | undefined, messages: string[]) => void;
}

const PARSER: ParserCase[] = [
  {
    test: "test_valid_frontmatter",
    files: { "my-skill/SKILL.md": fm("name: my-skill\ndescription: A test skill", "# My Skill\n\nInstructions here.") },
    skillsRef: "parses",
    check: (d) => expect(d).toMatchObject({ name: "my-skill", description: "A test skill", body: "# My Skill\n\nInstructions here." }),
  },
  {
    test: "test_missing_frontmatter",
    files: { "my-skill/SKILL.md": "# No frontmatter here" },
    skillsRef: "refuses",
    check: (_, m) => expect(m.join()).toContain("missing YAML frontmatter"),
  },
  {
    test: "test_unclosed_frontmatter",
    files: { "my-skill/SKILL.md": "---\nname: my-skill\ndescription: A test skill\n" },
    skillsRef: "refuses",
    check: (_, m) => expect(m.join()).toContain("the frontmatter has no closing '---'"),
  },
  {
    test: "test_invalid_yaml",
    files: { "my-skill/SKILL.md": fm("name: [invalid\ndescription: broken", "Body here") },
    skillsRef: "refuses",
    check: (_, m) => expect(m.join()).toContain("frontmatter is not valid YAML"),
  },
  {
    test: "test_non_dict_frontmatter",
    files: { "my-skill/SKILL.md": fm("- just\n- a\n- list") },
    skillsRef: "refuses",
    check: (_, m) => expect(m.join()).toContain("frontmatter must be a set of fields"),
  },
  {
    test: "test_read_valid_skill",
    files: { "my-skill/SKILL.md": fm("name: my-skill\ndescription: A test skill\nlicense: MIT", "# My Skill") },
    skillsRef: "parses",
    check: (d) => expect(d).toMatchObject({ name: "my-skill", license: "MIT" }),
  },
  {
    test: "test_read_with_metadata",
    files: { "my-skill/SKILL.md": fm("name: my-skill\ndescription: A test skill\nmetadata:\n  author: Test Author\n  version: 1.0") },
    skillsRef: "parses",
    check: (d) => expect(d!.metadata).toEqual({ author: "Test Author", version: "1.0" }),
  },
  { test: "test_missing_skill_md", files: { "my-skill/.keep": "" }, skillsRef: "refuses", check: (_, m) => expect(m.join()).toContain("no SKILL.md in") },
  {
    test: "test_missing_name",
    files: { "my-skill/SKILL.md": fm("description: A test skill") },
    skillsRef: "refuses",
    check: (_, m) => expect(m.join()).toContain("name is required"),
  },
  {
    test: "test_missing_description",
    files: { "my-skill/SKILL.md": fm("name: my-skill") },
    skillsRef: "refuses",
    check: (_, m) => expect(m.join()).toContain("description is required"),
  },
  // Both files exist; SKILL.md ("uppercase", no frontmatter) is the one read, so the refusal names it.
  {
    test: "test_find_skill_md_prefers_uppercase",
    files: { "my-skill/SKILL.md": "uppercase", "my-skill/skill.md": "lowercase" },
    skillsRef: "refuses",
    check: (_, m) => expect(m).toEqual([expect.stringMatching(/my-skill\/SKILL\.md:1: missing YAML frontmatter/)]),
  },
  {
    test: "test_find_skill_md_accepts_lowercase",
    files: { "my-skill/skill.md": basic("my-skill") },
    skillsRef: "parses",
    check: (d, m) => {
      expect(d?.source).toMatch(/my-skill\/skill\.md$/);
      expect(m.join()).toContain("rename this file to SKILL.md");
    },
  },
  {
    test: "test_find_skill_md_returns_none_when_missing",
    files: { "my-skill/.keep": "" },
    skillsRef: "refuses",
    check: (_, m) => expect(m.join()).toContain("no SKILL.md in"),
  },
  {
    test: "test_read_properties_with_lowercase_skill_md",
    files: { "my-skill/skill.md": fm("name: my-skill\ndescription: A test skill", "# My Skill") },
    skillsRef: "parses",
    check: (d) => expect(d).toMatchObject({ name: "my-skill", description: "A test skill" }),
  },
  {
    test: "test_read_with_allowed_tools",
    files: { "my-skill/SKILL.md": basic("my-skill", "\nallowed-tools: Bash(jq:*) Bash(git:*)") },
    skillsRef: "parses",
    differs: { why: "the whitelist is translated into this gateway's tools; Bash has none, and the warning names both entries as written" },
    check: (d, m) => {
      expect(d!.tools).toEqual([]);
      expect(m.join()).toContain("allowed-tools: Bash(jq:*) and Bash(git:*) are Claude Code tools this gateway does not have");
    },
  },
];

let root = "";
afterEach(() => rmSync(root, { recursive: true, force: true }));

function write(files: Record<string, string>, under = ""): string {
  root = mkdtempSync(join(tmpdir(), "skills-ref-"));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, under, path)), { recursive: true });
    writeFileSync(join(root, under, path), content);
  }
  return root;
}

describe("skills-ref's validator cases, through validate", () => {
  it("ports every case", () => expect(VALIDATOR.filter((c) => !c.test.includes("(")).length).toBe(21));

  it.each(VALIDATOR)("$test", (c) => {
    const dir = write(c.files);
    const problems = validatePath(join(dir, c.target));
    const verdict: Verdict = problems.some((p) => p.severity === "error") ? "invalid" : "valid";
    expect(verdict).toBe(c.differs?.ours ?? c.skillsRef);
    if (c.says) expect(problems.map((p) => p.message).join("\n")).toContain(c.says);
  });
});

describe("skills-ref's parser cases, through the gateway's loader", () => {
  it("ports every case", () => expect(PARSER.length).toBe(15));

  it.each(PARSER)("$test", (c) => {
    const dir = write(c.files, "skills");
    const catalog = loadCatalog(join(dir, "skills"), join(dir, "agents"), { env: {}, knownTools: ["use_skill", "use_agent", "complete", "read_skill_file"] });
    const loaded = catalog.skills.get("my-skill");
    expect(loaded ? "parses" : "refuses").toBe(c.skillsRef);
    c.check(loaded, [...catalog.problems, ...catalog.warnings]);
  });
});
