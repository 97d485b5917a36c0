// `npm start` at a terminal, the first five minutes: a real pseudo-terminal (see tty.ts), the real gateway, the
// strict fakes. The banner says where everything is; a platform that refuses its token is one line above the
// prompt; a turn that fails is the chat's one friendly line, not the log's lines with their ids.
import { rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeTelegram, type FakeTelegram } from "../fakes/telegram/server.js";
import { writeDefinitions } from "../helpers/harness.js";
import { freePort, processEnv } from "./child-process.js";
import { HAS_SCRIPT, onTerminal, requireScript, type Terminal } from "./tty.js";

requireScript("terminal first-run test");

let tg: FakeTelegram | undefined;
let term: Terminal | undefined;
let root: string | undefined;
afterEach(async () => {
  if (term) {
    term.kill();
    await term.exited;
  }
  await tg?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

/**
 * The lines as the screen ends up showing them: what a line was overwritten with after a carriage return (or a move to
 * its first column) is what stays; other escape sequences are dropped.
 */
const screen = (text: string) =>
  text.split("\n").map((line) =>
    (
      line
        .split(/\r|\x1b\[1G/)
        .filter((part) => part !== "")
        .at(-1) ?? ""
    ).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, ""),
  );

describe.skipIf(!HAS_SCRIPT)("npm start at a terminal", () => {
  it("lists every surface with its address, says in one line that Telegram refused the token, and shows a failed turn as one line", async () => {
    tg = await startFakeTelegram({ token: "999:THE-RIGHT-ONE" });
    const defs = writeDefinitions({});
    root = defs.root;
    const port = await freePort();
    // Nothing listens at the model's address: the turn fails (no retries).
    const nowhere = `http://127.0.0.1:${await freePort()}`;
    term = onTerminal("src/main.ts", {
      ...processEnv(nowhere, defs, { HTTP_PORT: String(port) }),
      HTTP_API_TOKENS: "tok-1:alice",
      ADMIN_TOKENS: "adm-1",
      TELEGRAM_BOT_TOKEN: "123456:REVOKED-TOKEN",
      TELEGRAM_API_ROOT: tg.url,
      TELEGRAM_ALLOWED_USERS: "1001",
    });
    await term.until("you> ");
    const base = `http://127.0.0.1:${port}`;
    const bannerRows = screen(term.shown).filter((l) => l.startsWith("  "));
    expect(bannerRows.slice(0, 5)).toEqual([
      `  Web chat  ${base}/`,
      `  HTTP API  ${base}/v1/`,
      `  Admin     ${base}/admin`,
      `  Metrics   ${base}/metrics`,
      `  Health    ${base}/healthz, ${base}/readyz`,
    ]);
    expect(bannerRows[5]).toMatch(/^ {2}Telegram {2}(connecting…|refused the bot token \(401 Unauthorized\): check TELEGRAM_BOT_TOKEN; trying again in 1 s)$/);
    expect(bannerRows[6]).toBe(`  Logs      ${defs.root}/data/switchboard.log`);

    const refused = "! Telegram refused the bot token (401 Unauthorized): check TELEGRAM_BOT_TOKEN; trying again in 1 s, then less and less often";
    await term.until(refused);
    // Drawn where the prompt was, which comes back under it (the redraw may reach the terminal in a later write).
    await term.until("you> ", term.shown.indexOf(refused));
    expect(term.shown.slice(term.shown.indexOf(refused))).toMatch(/^! Telegram refused[^\n]*\r?\n[^\n]*you> /);

    const before = term.shown.length;
    term.type("hello\r");
    await term.until("Sorry, I could not finish that", before);
    await term.until("you> ", term.shown.indexOf("Sorry, I could not finish that", before));
    const after = term.shown.slice(before);
    // After the typed text (on the prompt's line): the chat's one line, and the prompt again.
    expect(screen(after).filter((l) => l.trim() !== "")).toEqual([
      "hello",
      "· Sorry, I could not finish that: cannot reach the Anthropic API (Connection error.); check ANTHROPIC_BASE_URL and the network",
      "you> ",
    ]);
    expect(after).not.toMatch(/WARN|session:|request:|model call failed/);

    term.type("\x03");
    expect(await term.exited).toBe(0);
  });
});
