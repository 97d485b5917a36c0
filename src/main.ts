import { join } from "node:path";
import { startConsole, type ConsoleChat } from "../providers/console/console.js";
import { terminalLogger } from "../providers/console/terminal-log.js";
import { HttpProvider } from "../providers/http/server.js";
import { SlackProvider } from "../providers/slack/slack.js";
import { TelegramProvider } from "../providers/telegram/telegram.js";
import { createApp, startOrExit } from "./app.js";
import { loadConfigOrExit } from "./config.js";
import { PlatformConnection, type PlatformProvider } from "./gateway/connection.js";
import { logPlan } from "./log.js";
import { installProcessGuard } from "./process-guard.js";
import { secretsOf } from "./secrets.js";
import { loadMcpConfigOrExit } from "./mcp/load.js";
import { httpSurfaces } from "./surfaces.js";
import { metricsHandler, startMetricsServer } from "./telemetry/metrics-server.js";
import { handleStopSignals } from "./shutdown.js";

// `npm start`: the gateway as a service. Every provider whose credentials are set starts; the terminal
// chat joins when stdin is a TTY and is the fallback when nothing else is configured.
const config = loadConfigOrExit();
// With the terminal chat on a TTY, the log goes to DATA_DIR/switchboard.log and only warnings reach the terminal,
// one line each, drawn above the prompt.
const ttyChat = process.stdin.isTTY === true;
const plan = logPlan({
  ttyChat,
  stderrTTY: process.stderr.isTTY === true,
  format: config.LOG_FORMAT,
  level: config.LOG_LEVEL,
  dataDir: config.DATA_DIR,
});
// mcp.json is read before the logger exists: its header and env values are secrets the logs must never show.
const mcp = loadMcpConfigOrExit(config.MCP_CONFIG);
const { log, terminal } = terminalLogger(plan, [...secretsOf(config, process.env), ...mcp.secrets]);
// Until the service has started, an error that escapes every handler fails the start (exit 1); after that the
// guard logs it and the service keeps serving.
let failStart = (): void => process.exit(1);
const guard = installProcessGuard(log, { onStartFailure: () => failStart() });
const app = await startOrExit(() => createApp(config, log, undefined, { mcp }));
const stoppers: Array<() => Promise<void>> = [];

// Signals are handled from the start, so a stop during startup is graceful too; a second signal forces it.
let keepAlive: NodeJS.Timeout | null = null;
let chat: ConsoleChat | null = null;
const shutdown = handleStopSignals({
  log,
  plan,
  quiet: () => {
    chat?.stop();
    terminal?.detach();
  },
  async stop() {
    for (const stop of stoppers) await stop().catch((error: unknown) => log.warn({ err: error }, "provider stop failed"));
    await app.close();
    // oxlint-disable-next-line eslint/no-restricted-globals -- the keep-alive below is the process's own interval
    if (keepAlive) clearInterval(keepAlive);
  },
});
failStart = () => void shutdown("startup failure", 1);

// Chat platforms connect in the background, retrying with backoff: one that cannot be reached (or refuses its
// token) never holds up the others, the HTTP API or the terminal chat; /readyz and the banner say where each is.
const platforms: PlatformConnection[] = [];
function connect(name: string, provider: PlatformProvider): void {
  let failing = false;
  const connection = new PlatformConnection(name, provider, {
    log: log.child({ provider: name.toLowerCase() }),
    // The failure itself reached the terminal as a warning; that it came back is said there too.
    onChange: (state) => {
      if (state.status === "retrying") failing = true;
      if (state.status === "connected" && failing) chat?.notice(`${name}: connected as ${state.identity}`);
    },
  });
  platforms.push(connection);
  stoppers.push(() => connection.stop());
  connection.start();
}

// What every surface accepts of a user's files.
const fileLimits = { maxFileBytes: config.MAX_FILE_BYTES, maxFilesPerMessage: config.MAX_FILES_PER_MESSAGE, maxSessionBytes: config.MAX_SESSION_FILE_BYTES };

if (config.TELEGRAM_BOT_TOKEN) {
  const telegram = new TelegramProvider(app.gateway, {
    token: config.TELEGRAM_BOT_TOKEN,
    apiRoot: config.TELEGRAM_API_ROOT,
    allowedUsers: config.TELEGRAM_ALLOWED_USERS,
    webhook: config.TELEGRAM_WEBHOOK_URL ? { url: config.TELEGRAM_WEBHOOK_URL, secret: config.TELEGRAM_WEBHOOK_SECRET, port: config.TELEGRAM_WEBHOOK_PORT } : undefined,
    throttle: config.TELEGRAM_THROTTLE,
    streaming: config.TELEGRAM_STREAMING,
    maxRetries: config.TELEGRAM_MAX_RETRIES,
    fileLimits,
    log: log.child({ provider: "telegram" }),
  });
  connect("Telegram", telegram);
  if (config.TELEGRAM_ALLOWED_USERS.length === 0) {
    log.warn("TELEGRAM_ALLOWED_USERS is empty: anyone who finds the bot can use it (and your API credits)");
  }
}

if (config.SLACK_BOT_TOKEN) {
  const slack = new SlackProvider(app.gateway, {
    botToken: config.SLACK_BOT_TOKEN,
    appToken: config.SLACK_APP_TOKEN,
    signingSecret: config.SLACK_SIGNING_SECRET,
    port: config.SLACK_PORT,
    apiUrl: config.SLACK_API_URL,
    maxRetries: config.SLACK_MAX_RETRIES,
    streaming: config.SLACK_STREAMING,
    allowedUsers: config.SLACK_ALLOWED_USERS,
    allowedChannels: config.SLACK_ALLOWED_CHANNELS,
    fileLimits,
    log: log.child({ provider: "slack" }),
  });
  connect("Slack", slack);
}

// The HTTP API (and its web chat at /) runs whenever the gateway runs. It cannot be skipped like a chat
// provider: a port that is taken usually means another gateway already runs here, so say so and stop.
// GET /metrics: on the HTTP API's port, or on METRICS_PORT alone (e.g. a port only the monitoring network reaches).
const metrics = metricsHandler(app.metrics, config.METRICS_TOKEN, log.child({ part: "metrics" }));
let metricsPort: number | null = null;
if (config.METRICS_PORT !== undefined) {
  try {
    const server = await startMetricsServer(config.HTTP_HOST, config.METRICS_PORT, metrics, log.child({ part: "metrics" }));
    metricsPort = server.port;
    stoppers.push(() => server.stop());
  } catch (error) {
    process.stderr.write(`Cannot serve the metrics on METRICS_PORT=${config.METRICS_PORT}: ${error instanceof Error ? error.message : String(error)}\n`);
    await shutdown("startup failure", 1);
  }
}
const http = new HttpProvider(app.gateway, {
  host: config.HTTP_HOST,
  port: config.HTTP_PORT,
  auth: {
    tokens: config.HTTP_API_TOKENS,
    jwt:
      config.HTTP_JWT_JWKS_URL && config.HTTP_JWT_AUDIENCE && config.HTTP_JWT_ISSUER
        ? { jwksUrl: config.HTTP_JWT_JWKS_URL, audience: config.HTTP_JWT_AUDIENCE, issuer: config.HTTP_JWT_ISSUER, userClaims: config.HTTP_JWT_USER_CLAIM }
        : undefined,
  },
  log: log.child({ provider: "http" }),
  fileLimits,
  admin: { tokens: config.ADMIN_TOKENS, stuckAfterMs: config.ADMIN_STUCK_AFTER, mcp: () => app.mcp.views() },
  caps: { sessions: config.HTTP_SESSIONS_PER_USER_MAX, streams: config.HTTP_STREAMS_PER_USER_MAX, storedBytes: config.HTTP_STORED_BYTES_PER_USER_MAX },
  ...(config.METRICS_PORT === undefined ? { metrics } : {}),
  readiness: () => Object.fromEntries(platforms.map((p) => [p.name.toLowerCase(), p.readiness()])),
});
try {
  await http.start();
  stoppers.push(() => http.stop());
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  await shutdown("startup failure", 1);
}
if (config.HTTP_API_TOKENS.size === 0 && !config.HTTP_JWT_JWKS_URL) {
  log.info("the HTTP API has no tokens (HTTP_API_TOKENS) or JWT settings: every API call gets 401");
}

const surfaces = [
  ...httpSurfaces(config, { http: http.port() ?? config.HTTP_PORT, metrics: metricsPort }),
  ...platforms.map((p): [string, string] => [p.name, p.status()]),
];
// A configured platform counts even while it connects: the terminal chat is the fallback only without any.
if (platforms.length === 0 || ttyChat) {
  chat = startConsole(app.gateway, {
    jsonl: false,
    exitOnEnd: false,
    fileLimits,
    filesDir: join(config.DATA_DIR, "files"),
    surfaces,
    ...(plan.to === "file" ? { logFile: plan.file } : {}),
    onEnd: () => log.info("terminal chat input closed; the service keeps running until SIGINT or SIGTERM"),
  });
  if (ttyChat) terminal?.attach((line) => chat?.notice(line));
}
try {
  await app.gateway.recover();
  await app.catalog.watch();
} catch (error) {
  // The process guard keeps a running service alive; a start that cannot finish must still fail loudly.
  log.error({ err: error }, "switchboard could not finish starting");
  await shutdown("startup failure", 1);
}
guard.serving();
// The platforms may still be connecting: each says so in a line of its own when it is up.
log.info(
  { providers: ["http", ...(chat ? ["console"] : []), ...platforms.map((p) => p.name.toLowerCase())], surfaces: Object.fromEntries(surfaces) },
  "switchboard started",
);
// A service: nothing else may hold the event loop open (stdin can close), so keep it alive until a signal.
// oxlint-disable-next-line eslint/no-restricted-globals -- the process itself is kept alive, not a timed chore
keepAlive = setInterval(() => {}, 1 << 30);
