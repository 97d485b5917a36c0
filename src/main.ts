import { startConsole } from "../providers/console/console.js";
import { createApp } from "./app.js";
import { loadConfigOrExit } from "./config.js";
import { createLogger } from "./log.js";

// `npm start`: the gateway as a service. Providers whose credentials are set start; the terminal chat
// joins when stdin is a TTY and is the fallback when nothing else is configured.
const config = loadConfigOrExit();
const log = createLogger(config.LOG_LEVEL);
const app = createApp(config, log);
const providers: string[] = [];

// Chat platforms (Telegram, Slack) register here once they exist; none is configured yet.
if (providers.length === 0 || process.stdin.isTTY) {
  startConsole(app.gateway, {
    jsonl: false,
    exitOnEnd: false,
    onEnd: () => log.info("terminal chat input closed; the service keeps running until SIGINT or SIGTERM"),
  });
  providers.push("console");
}
// A service: nothing else may hold the event loop open (stdin can close), so keep it alive until a signal.
const keepAlive = setInterval(() => {}, 1 << 30);
app.gateway.recover();
log.info({ providers }, "switchboard started");

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, "shutting down: finishing or checkpointing in-flight turns");
  await app.close();
  clearInterval(keepAlive);
  process.exit(0);
}
process.on("SIGINT", () => void shutdown("SIGINT"));
process.on("SIGTERM", () => void shutdown("SIGTERM"));
