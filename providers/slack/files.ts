import type { WebClient } from "@slack/web-api";
import type { Logger } from "pino";
import { z } from "zod";
import { download } from "../../src/files/download.js";
import { acceptFile } from "../../src/files/intake.js";
import { quote, tooLargeReason, tooManyReason, type FileLimits } from "../../src/files/limits.js";
import { sanitizeFilename } from "../../src/files/names.js";
import type { InboundFile } from "../../src/files/types.js";
import type { Timers } from "../../src/runtime/deps.js";

// The files of a Slack message (`files` on message/app_mention events): each downloaded from its
// url_private_download with the bot token, its size (the event's `size`) checked first. In a Slack Connect channel
// the event only says `file_access: "check_file_info"`, and files.info gives the rest. Without files:read Slack
// answers a download with its HTML sign-in page (and files.info with missing_scope): the admin is told once how to
// fix it, each user which file could not be read. The bot token is only ever sent to Slack's file host (or to the
// host of SLACK_API_URL, for a test or a proxy), never to a URL an event merely names.

export const FILES_SCOPE_FIX =
  "Slack would not let the bot read a file: the app lacks the files:read scope. Add files:read under OAuth & Permissions → Bot Token Scopes, then reinstall the app to the workspace";

const slackFile = z.looseObject({
  id: z.string(),
  name: z.string().nullish(),
  title: z.string().nullish(),
  mimetype: z.string().nullish(),
  size: z.number().nullish(),
  mode: z.string().nullish(),
  file_access: z.string().nullish(),
  is_external: z.boolean().nullish(),
  url_private_download: z.string().nullish(),
  url_private: z.string().nullish(),
});
type SlackFile = z.infer<typeof slackFile>;

/** The files of one message at a time: at most MAX_FILES_PER_MESSAGE, each read or named with its problem. */
export class SlackInboundFiles {
  private toldScope = false;

  constructor(private readonly deps: Omit<SlackFileDeps, "scopeMissing" | "limits"> & { limits: FileLimits }) {}

  async read(raw: readonly unknown[]): Promise<{ files: InboundFile[]; notices: string[] }> {
    const { maxFilesPerMessage } = this.deps.limits;
    const notices = raw.length > maxFilesPerMessage ? [tooManyReason(raw.length, maxFilesPerMessage)] : [];
    const files = await fetchSlackFiles(raw.slice(0, maxFilesPerMessage), { ...this.deps, scopeMissing: () => this.scopeMissing() });
    for (const file of files) {
      if (!file.ok) notices.push(file.reason);
      else if (file.note) notices.push(file.note);
    }
    return { files, notices };
  }

  /** Said once per process: every file after that would only repeat it. */
  private scopeMissing(): void {
    if (this.toldScope) return;
    this.toldScope = true;
    this.deps.log.error(FILES_SCOPE_FIX);
  }
}

export interface SlackFileDeps {
  client: WebClient;
  token: string;
  /** SLACK_API_URL: its host may serve files too (a proxy, a test). */
  apiUrl: string | undefined;
  limits: Pick<FileLimits, "maxFileBytes">;
  timers: Timers;
  log: Logger;
  /** Logs the missing-scope fix for the admin, once per process. */
  scopeMissing: () => void;
  attempts?: number;
  backoffMs?: number;
}

/** Downloads and judges each file; one that cannot be read becomes a failure saying why, the others go on. */
export function fetchSlackFiles(files: readonly unknown[], deps: SlackFileDeps): Promise<InboundFile[]> {
  return Promise.all(files.map((raw, i) => fetchOne(raw, i, deps)));
}

async function fetchOne(raw: unknown, index: number, deps: SlackFileDeps): Promise<InboundFile> {
  const parsed = slackFile.safeParse(raw);
  if (!parsed.success)
    return { ok: false, name: `file ${index + 1}`, reason: `I could not read file ${index + 1} of your message: Slack described it in a way I don't understand.` };
  let file: SlackFile = parsed.data;
  if (file.file_access === "check_file_info") {
    const info = await deps.client.files.info({ file: file.id }).catch((error: unknown) => error as { data?: { error?: string } });
    const data = "file" in info ? slackFile.safeParse(info.file) : null;
    if (!data?.success) {
      const error = (info as { data?: { error?: string } }).data?.error;
      if (error === "missing_scope") deps.scopeMissing();
      else deps.log.warn({ file: file.id, error }, "slack files.info failed");
      return {
        ok: false,
        name: file.id,
        reason: `I could not read a file shared from another workspace (${file.id})${error === "missing_scope" ? "; the admin has been told how to fix it" : ""}.`,
      };
    }
    file = data.data;
  }
  const name = sanitizeFilename(file.name ?? file.title, `file-${file.id}`);
  if (file.mode === "tombstone") return { ok: false, name, reason: `${quote(name)} was deleted before I could read it.` };
  if (file.mode === "hidden_by_limit") return { ok: false, name, reason: `${quote(name)} is hidden by this workspace's plan limits, so I can't read it.` };
  if (file.is_external || file.mode === "external")
    return { ok: false, name, reason: `${quote(name)} is a link to a file outside Slack; I can only read files uploaded to Slack.` };
  if (typeof file.size === "number" && file.size > deps.limits.maxFileBytes)
    return { ok: false, name, reason: tooLargeReason(name, file.size, deps.limits.maxFileBytes, "MAX_FILE_BYTES") };
  const url = file.url_private_download ?? file.url_private;
  if (!url || !tokenMayGo(url, deps.apiUrl)) {
    deps.log.warn({ file: file.id, host: hostOf(url) }, "slack file url is not on Slack's file host; not downloaded");
    return { ok: false, name, reason: `I could not download ${quote(name)} from Slack; please upload it again.` };
  }
  const result = await download({
    url,
    headers: { authorization: `Bearer ${deps.token}` },
    maxBytes: deps.limits.maxFileBytes,
    timers: deps.timers,
    ...(deps.attempts !== undefined ? { attempts: deps.attempts } : {}),
    ...(deps.backoffMs !== undefined ? { backoffMs: deps.backoffMs } : {}),
  });
  if (!result.ok) {
    if (result.problem === "too_large") return { ok: false, name, reason: tooLargeReason(name, result.size, deps.limits.maxFileBytes, "MAX_FILE_BYTES") };
    if (result.problem === "html") {
      deps.scopeMissing();
      return { ok: false, name, reason: `I could not read ${quote(name)}: this bot may not read files in Slack yet (the admin has been told how to fix it).` };
    }
    deps.log.warn({ file: file.id, status: result.status, detail: result.detail }, "slack file download failed");
    return { ok: false, name, reason: `I could not download ${quote(name)} from Slack (tried ${deps.attempts ?? 3} times); please upload it again.` };
  }
  return acceptFile({ name, bytes: result.bytes, declaredMime: file.mimetype ?? null }, deps.limits);
}

/** Slack's file host over HTTPS, or the host SLACK_API_URL names. */
function tokenMayGo(url: string, apiUrl: string | undefined): boolean {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return false;
  }
  if (target.protocol === "https:" && target.hostname === "files.slack.com") return true;
  if (!apiUrl) return false;
  try {
    return new URL(apiUrl).origin === target.origin;
  } catch {
    return false;
  }
}

function hostOf(url: string | null | undefined): string | null {
  try {
    return url ? new URL(url).host : null;
  } catch {
    return null;
  }
}
