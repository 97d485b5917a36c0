import { randomUUID } from "node:crypto";
import { userInfo } from "node:os";
import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { z } from "zod";
import { userId, sessionKey, type GatewayFacade as Gateway, type OutboundMessage } from "../../src/gateway/index.js";
import { banner, type BannerRow } from "./banner.js";
import { eraseWritten } from "./erase.js";
import { gated } from "./gate.js";
import { Spinner, type SpinnerTimers } from "./spinner.js";
import { attachPath, readLocalFiles, saveOutboundFile, savedLine } from "./files.js";
import { describeFile } from "../../src/files/intake.js";
import { DEFAULT_FILE_LIMITS, tooManyReason, type FileLimits } from "../../src/files/limits.js";
import type { InboundFile, OutboundFile } from "../../src/files/types.js";

export interface ConsoleOptions {
  /** Read `{"text": …}` lines and write one JSON object per outgoing message. */
  jsonl: boolean;
  /** End of input finishes pending work and resolves `done` (npm run chat); a service keeps running. */
  exitOnEnd: boolean;
  session?: string;
  user?: string;
  /** Called when the input ends. */
  onEnd?: () => void;
  input?: Readable;
  output?: Writable;
  /** Where the log file is, for the banner (when logs do not go to the terminal). */
  logFile?: string;
  /** The banner's rows: what else is up (web chat, /admin, /metrics) and each chat platform's state. */
  surfaces?: BannerRow[];
  /** Ctrl-C at the interactive prompt (the terminal is in raw mode, so no signal is sent). Default: raise SIGINT. */
  onInterrupt?: () => void;
  /** For the spinner's frames (tests draw them by hand). */
  timers?: SpinnerTimers;
  /** MAX_FILE_BYTES, MAX_FILES_PER_MESSAGE for `"files"` and `/attach` (default: the product's defaults). */
  fileLimits?: FileLimits;
  /** Where files agents send are saved (DATA_DIR/files). */
  filesDir?: string;
}

export interface ConsoleChat {
  /** Resolves when the input ended and, with `exitOnEnd`, the pending work is done. */
  done: Promise<void>;
  /** Stops reading and drawing (the process is stopping); `onEnd` is not called. */
  stop(): void;
  /**
   * A line from outside the chat (a warning from the log, a platform that came up): written above the prompt, which
   * is redrawn with what was typed; while a reply is being written, after that reply.
   */
  notice(line: string): void;
}

const jsonlLine = z
  .object({
    text: z.string({ error: "is required and must be a string" }).optional(),
    files: z.array(z.string().min(1, { error: "must be a path" }), { error: "must be a list of paths" }).optional(),
    user: z.string().min(1).optional(),
    session: z.string().min(1).optional(),
    id: z.string().min(1).optional(),
  })
  .superRefine((line, ctx) => {
    // Text may be left out (or empty) only when files come instead.
    if (line.files?.length) return;
    if (line.text === undefined) ctx.addIssue({ code: "custom", path: ["text"], message: "is required and must be a string" });
    else if (line.text.trim() === "") ctx.addIssue({ code: "custom", path: ["text"], message: "must not be empty" });
  });

type Line = { text: string; session?: string; user?: string; id?: string; files?: string[]; attached?: InboundFile[] };

/** The terminal chat: every bot line shows the agent that said it. */
export function startConsole(gateway: Gateway, options: ConsoleOptions): ConsoleChat {
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const interactive = !options.jsonl && (input as { isTTY?: boolean }).isTTY === true;
  const defaultSession = options.session ?? "local";
  const defaultUser = options.user ?? safeUserName();
  const write = (line: string) => output.write(`${line}\n`);
  /** The reply being written on the current line (plain mode): its agent and the text shown so far. */
  let open: { sessionKey: string; agent: string; depth: number; text: string } | null = null;
  /** Lines that came while a reply was being written: notices, and what was sent meanwhile; written after it. */
  const held: string[] = [];
  /** Requests sent from here whose turns have not ended. */
  let running = 0;
  let closed = false;
  let stopped = false;
  const prompt = (preserveCursor?: boolean) => {
    if (interactive && !closed) rl.prompt(preserveCursor);
  };
  // The spinner draws on the prompt's line, so only where a person watches a terminal.
  const spinner =
    interactive && (output as { isTTY?: boolean }).isTTY === true
      ? new Spinner(
          (text) => output.write(text),
          () => {
            if (open) return false;
            // Someone is typing: give them their line back until it is empty again.
            if (!closed && rl.line !== "") {
              if (spinner?.clear()) prompt(true);
              return false;
            }
            return true;
          },
          options.timers,
        )
      : null;
  /** Clears the current line (the half-typed prompt, the spinner) before a reply is written there. */
  const clearLine = () => {
    output.write("\r\x1b[K");
    spinner?.erased();
  };
  /** A line from the chat itself (a refusal, an error) or from outside it, not in the middle of the prompt. */
  const note = (line: string) => {
    // Never inside a reply being written: it waits for the reply's end.
    if (open) return void held.push(line);
    if (interactive) clearLine();
    write(line);
    prompt(true);
  };
  /** The reply's line is done: what waited for it is written, then the prompt with what was typed meanwhile. */
  const replyEnded = () => {
    open = null;
    for (const line of held.splice(0)) write(line);
    prompt(true);
  };

  gateway.register({
    prefix: "console",
    // Plain mode prints a reply as the model writes it; --jsonl keeps one object per whole message.
    ...(options.jsonl
      ? {}
      : {
          stream(key: string, delta: { agent: string; depth: number; text: string }) {
            if (!open || open.sessionKey !== key || open.agent !== delta.agent) {
              if (open) output.write("\n");
              else if (interactive) clearLine();
              output.write(`${label(delta)} `);
              open = { sessionKey: key, agent: delta.agent, depth: delta.depth, text: "" };
            }
            open.text += delta.text;
            output.write(delta.text);
          },
          resetStream(key: string, who: { agent: string; depth: number }) {
            if (!open || open.sessionKey !== key || open.agent !== who.agent) return;
            // The model call failed midway and starts over: a terminal takes the words back; a pipe cannot, so it
            // says the reply starts again on a line of its own.
            if ((output as { isTTY?: boolean }).isTTY) output.write(eraseWritten(`${label(who)} ${open.text}`, (output as { columns?: number }).columns ?? 80));
            else output.write(` …(interrupted; starting again)\n`);
            output.write(`${label(who)} `);
            open.text = "";
          },
        }),
    async deliverFile(file: OutboundFile) {
      const path = await saveOutboundFile(options.filesDir ?? "./data/files", file);
      if (options.jsonl)
        return void write(
          JSON.stringify({ type: "file", filename: file.name, path, mime: file.mime, agent: file.agent, ...(file.caption ? { caption: file.caption } : {}) }),
        );
      if (open) output.write("\n");
      else if (interactive) clearLine();
      write(`${label(file)} ${savedLine(file, path)}`);
      replyEnded();
    },
    async deliver(message: OutboundMessage) {
      if (options.jsonl) {
        write(
          JSON.stringify({
            type: "message",
            agent: message.agent,
            depth: message.depth,
            text: message.text,
            id: message.id,
            ...(message.approvalId ? { approval_id: message.approvalId } : {}),
          }),
        );
      } else {
        const streamed = open?.sessionKey === message.sessionKey && open.agent === message.agent ? open.text : null;
        // A notice from elsewhere ("still working on your previous message") waits for the reply being written.
        if (open && streamed === null && message.kind === "notice" && !message.approvalId) return void held.push(`${label(message)} ${message.text}`);
        if (streamed !== null && message.text.startsWith(streamed)) {
          // Shown as it was written: finish the line with whatever the stream had not shown yet.
          write(message.text.slice(streamed.length));
        } else {
          // Replace the half-typed prompt line (or end a line the stream left), print the reply, redraw the prompt.
          if (open) output.write("\n");
          else if (interactive) clearLine();
          write(`${label(message)} ${message.text}`);
        }
        if (message.approvalId) write(`  → /approve ${message.approvalId}   or   /deny ${message.approvalId}`);
        replyEnded();
      }
    },
  });

  // readline echoes what is typed where the cursor is; while a reply is being written that is inside the reply, so
  // the echo is held back then, and the prompt is redrawn with the typed text once the reply's line is done.
  const rl = createInterface({ input, terminal: interactive, ...(interactive ? { output: gated(output, () => open === null) } : {}) });
  if (interactive) {
    write(banner({ exitOnEnd: options.exitOnEnd, logFile: options.logFile, surfaces: options.surfaces }));
    rl.setPrompt("you> ");
    rl.prompt();
    // In raw mode Ctrl-C is a key, not a signal: pass it on, so it stops the process like a signal would.
    rl.on("SIGINT", () => (options.onInterrupt ?? (() => process.kill(process.pid, "SIGINT")))());
  }
  let lineNo = 0;
  // Lines are stored one after the other, in the order they were typed.
  let submitted: Promise<void> = Promise.resolve();
  /** Files staged with /attach, sent with the next message. */
  let attached: Promise<InboundFile[]> = Promise.resolve([]);
  rl.on("line", (raw) => {
    lineNo++;
    const path = options.jsonl ? null : attachPath(raw);
    if (path !== null) {
      attached = attached.then((files) => attach(files, path));
      return prompt();
    }
    const message = options.jsonl ? parseJsonl(raw, lineNo, write) : parsePlain(raw);
    // Typed blind while a reply was being written: shown as sent once the reply's line is done.
    if (interactive && open && message) held.push(`you> ${raw}`);
    if (message) {
      const staged = attached;
      attached = Promise.resolve([]);
      submitted = submitted.then(async () => submit({ ...message, attached: await staged }));
    }
    prompt();
    if (message) spinner?.start();
  });
  async function attach(files: InboundFile[], path: string): Promise<InboundFile[]> {
    const limits = options.fileLimits ?? DEFAULT_FILE_LIMITS;
    if (path === "") return (note("· /attach <path> attaches a file to your next message"), files);
    if (files.length >= limits.maxFilesPerMessage) return (note(`· ${tooManyReason(files.length + 1, limits.maxFilesPerMessage)}`), files);
    const [file] = await readLocalFiles([path], limits);
    if (!file!.ok) return (note(`· ${file!.reason}`), files);
    note(`· ${describeFile(file!)} will go with your next message${file!.note ? ` (${file!.note})` : ""}`);
    return [...files, file!];
  }

  async function submit(message: Line): Promise<void> {
    {
      try {
        const limits = options.fileLimits ?? DEFAULT_FILE_LIMITS;
        const paths = message.files ?? [];
        const notices = paths.length > limits.maxFilesPerMessage ? [tooManyReason(paths.length, limits.maxFilesPerMessage)] : [];
        const files = [...(message.attached ?? []), ...(await readLocalFiles(paths.slice(0, limits.maxFilesPerMessage), limits))];
        for (const file of files) {
          if (!file.ok) notices.push(file.reason);
          else if (file.note) notices.push(file.note);
        }
        for (const notice of notices) {
          if (options.jsonl) write(JSON.stringify({ type: "message", agent: "switchboard", depth: 0, text: notice }));
          else note(`· ${notice}`);
        }
        const result = await gateway.submit({
          sessionKey: sessionKey("console", message.session ?? defaultSession),
          messageId: message.id ?? randomUUID(),
          userId: userId("console", message.user ?? defaultUser),
          text: message.text,
          ...(files.length > 0 ? { files } : {}),
        });
        if (result.status === "refused" || (result.status === "limited" && !result.quiet)) {
          if (options.jsonl) write(JSON.stringify({ type: "message", agent: "switchboard", depth: 0, text: result.text }));
          else note(`· ${result.text}`);
        }
        // The spinner turns until the request is processed and its replies are shown.
        if (interactive && (result.status === "accepted" || result.status === "duplicate")) {
          running++;
          const ended = () => {
            running--;
            turnEnded();
          };
          void gateway.whenDone(result.requestId).then(ended, ended);
        } else turnEnded();
      } catch (error) {
        if (options.jsonl) write(JSON.stringify({ type: "error", message: String(error) }));
        else note(`! ${String(error)}`);
        turnEnded();
      }
    }
  }
  function turnEnded(): void {
    // Its replies are shown by now: a reply still open was cut short (a /cancel, a failure) and its line ends here.
    if (running === 0 && open) {
      output.write("\n");
      replyEnded();
    }
    if (spinner?.end()) prompt(true);
  }

  const done = new Promise<void>((resolve) => {
    rl.on("close", () => {
      closed = true;
      if (stopped) return;
      if (interactive && !options.exitOnEnd) note("Chat input closed; Switchboard keeps running. Ctrl-C stops it.");
      options.onEnd?.();
      if (!options.exitOnEnd) return;
      void submitted.then(() => gateway.idle()).then(resolve);
    });
  });
  return {
    done,
    notice(line: string) {
      if (stopped) return void process.stderr.write(`${line}\n`);
      // stdout carries only the JSON objects in --jsonl mode.
      if (options.jsonl) return void process.stderr.write(`${line}\n`);
      note(line);
    },
    stop() {
      if (stopped) return;
      stopped = true;
      spinner?.stop();
      // A reply cut off mid-stream stays on screen; the prompt's line is cleared for what comes next.
      if (open) output.write("\n");
      else if (interactive && !closed) clearLine();
      open = null;
      rl.close();
    },
  };
}

function parseJsonl(raw: string, lineNo: number, write: (line: string) => void) {
  if (raw.trim() === "") return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    write(JSON.stringify({ type: "error", message: `line ${lineNo}: not valid JSON; expected {"text": "..."}` }));
    return null;
  }
  const parsed = jsonlLine.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = issue.path.join(".") || "line";
    write(JSON.stringify({ type: "error", message: `line ${lineNo}: ${field} ${issue.message}; expected {"text": "..."}` }));
    return null;
  }
  return { ...parsed.data, text: parsed.data.text ?? "" };
}

function parsePlain(raw: string): Line | null {
  return raw.trim() === "" ? null : { text: raw };
}

function label(message: { agent: string; depth: number }): string {
  return message.depth === 0 ? "·" : `[${message.agent}]`;
}

function safeUserName(): string {
  try {
    return userInfo().username || "local";
  } catch {
    return "local";
  }
}
