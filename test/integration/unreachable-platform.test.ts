// `npm start` with a chat platform that cannot be reached or refuses its token: everything else is up at once
// (the HTTP API, its health checks), /readyz names the platform and what is wrong with it, and the log says it
// in one line. Real child processes; the platforms are the strict fakes behind a door (closed, black hole, open).
import { rmSync } from "node:fs";
import { afterEach, beforeEach, expect, it } from "vitest";
import { startFakeAnthropic, type FakeAnthropic } from "../fakes/anthropic/server.js";
import { startFakeSlack } from "../fakes/slack/server.js";
import { startFakeTelegram } from "../fakes/telegram/server.js";
import { openDoor } from "../helpers/door.js";
import { writeDefinitions } from "../helpers/harness.js";
import { freePort, processEnv, run, type Proc } from "./child-process.js";

let model: FakeAnthropic;
let root: string;
let env: Record<string, string>;
const cleanups: Array<() => unknown> = [];
beforeEach(async () => {
  model = await startFakeAnthropic();
  const defs = writeDefinitions({});
  root = defs.root;
  env = processEnv(model.url, defs, { HTTP_PORT: String(await freePort()) });
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await model.close();
  rmSync(root, { recursive: true, force: true });
});

function start(extra: Record<string, string>): Proc {
  const p = run("src/main.ts", [], { ...env, ...extra });
  cleanups.push(async () => {
    if (p.child.exitCode === null) p.child.kill("SIGKILL");
    await p.exited;
  });
  return p;
}

const get = async (path: string) => {
  const r = await fetch(`http://127.0.0.1:${env.HTTP_PORT}${path}`);
  return { status: r.status, body: (await r.json()) as unknown };
};
const logged = (p: Proc) =>
  p.stderr
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { level: number; msg: string });

it("a black-holed Telegram holds up nothing: the API answers at once, /readyz says Telegram is connecting", async () => {
  const tg = await startFakeTelegram();
  const door = await openDoor(tg.url, "blackhole");
  cleanups.push(
    () => tg.close(),
    () => door.close(),
  );
  const p = start({ TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: door.url() });
  await p.logged('"msg":"switchboard started"');
  await door.accepted(1);
  expect(await get("/healthz")).toEqual({ status: 200, body: { status: "ok" } });
  expect(await get("/readyz")).toEqual({ status: 503, body: { status: "not_ready", checks: { database: "ok", telegram: "Telegram connecting…" } } });
  p.child.kill("SIGTERM");
  expect(await p.exited).toBe(0);
});

it("a refused Telegram token is said in one line and on /readyz, while the rest serves; SIGTERM still stops it with 0", async () => {
  const tg = await startFakeTelegram({ token: "999:THE-RIGHT-ONE" });
  cleanups.push(() => tg.close());
  const p = start({ TELEGRAM_BOT_TOKEN: "123456:REVOKED-TOKEN", TELEGRAM_API_ROOT: tg.url });
  await p.logged("Telegram refused the bot token");
  const refused = "Telegram refused the bot token (401 Unauthorized): check TELEGRAM_BOT_TOKEN";
  expect(
    logged(p)
      .filter((l) => l.level >= 40)
      .map((l) => l.msg),
  ).toEqual(["TELEGRAM_ALLOWED_USERS is empty: anyone who finds the bot can use it (and your API credits)", `${refused}; trying again in 1 s, then less and less often`]);
  await p.logged('"msg":"switchboard started"');
  const ready = await get("/readyz");
  expect(ready.status).toBe(503);
  expect((ready.body as { checks: Record<string, string> }).checks.telegram).toMatch(new RegExp(`^${refused.replace(/[()]/g, "\\$&")}; trying again (in \\d+ s|now)$`));
  expect(p.stderr).not.toContain("REVOKED-TOKEN");
  p.child.kill("SIGTERM");
  expect(await p.exited).toBe(0);
});

it("Slack unreachable (nothing listens) is said in one line, Slack refusing the token (invalid_auth) in another", async () => {
  const slack = await startFakeSlack();
  const door = await openDoor(slack.apiUrl, "closed");
  cleanups.push(
    () => slack.close(),
    () => door.close(),
  );
  const slackEnv = { SLACK_SIGNING_SECRET: "secret", SLACK_PORT: String(await freePort()) };
  const closed = start({ ...slackEnv, SLACK_BOT_TOKEN: slack.botToken, SLACK_API_URL: door.url("/api/") });
  await closed.logged("Slack is unreachable");
  await closed.logged('"msg":"switchboard started"');
  const checks = ((await get("/readyz")).body as { checks: Record<string, string> }).checks;
  expect(checks.slack).toMatch(new RegExp(`^Slack is unreachable at ${door.url("/api/")} \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${door.port}\\); trying again`));
  closed.child.kill("SIGTERM");
  expect(await closed.exited).toBe(0);

  const refused = start({ ...slackEnv, SLACK_BOT_TOKEN: "xoxb-revoked", SLACK_API_URL: slack.apiUrl });
  await refused.logged("Slack refused the bot token");
  expect(
    logged(refused)
      .filter((l) => l.level >= 40)
      .map((l) => l.msg),
  ).toEqual(["Slack refused the bot token (invalid_auth): check SLACK_BOT_TOKEN; trying again in 1 s, then less and less often"]);
});
