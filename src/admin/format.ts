// The operator's views as text for a terminal: aligned columns within 100 characters, and every string that came
// from a user or a model cleaned of control characters and escape sequences (table() and line() do it), so a
// hostile session key or tool input cannot rewrite the operator's terminal.

import { agentLabel } from "../runtime/labels.js";
import type { ApprovalItem, SessionDetail, SessionRow, StuckView } from "./report.js";
import { ago, clean, clip, duration, table, tokens, usd } from "./text.js";

const WIDTH = 100;
/** The session column of the sessions list. */
const KEY = 26;
/** The owner column of the sessions list. */
const OWNER = 18;
/** Said under a table that had to cut a session key short. */
const CUT = "\n(keys cut short with …: --json shows them whole)";
/** Under the sessions list, where `show` takes the start of a key. */
const CUT_LIST = "\n(cut short with …: show takes the start of a key; --json shows them whole)";
const STATUS: Record<string, string> = { waiting_user: "waiting user", waiting_approval: "needs approval" };

export function formatSessions(view: { sessions: SessionRow[] }, now = Date.now()): string {
  if (view.sessions.length === 0) return "no sessions yet";
  const text = table(
    [
      { title: "SESSION", width: KEY },
      { title: "OWNER", width: OWNER },
      // "needs approval" says a session waits on one; the approvals command lists them, show and --json count tokens.
      { title: "STATUS", width: 14 },
      { title: "STACK", width: 15 },
      { title: "COST", width: 7, align: "right" },
      { title: "ACTIVE", width: 10 },
    ],
    view.sessions.map((s) => [s.key, s.owner ?? "-", status(s.status), stack(s.stack, 15), usd(s.costUsd), ago(s.lastActivity, now)]),
  );
  return text + (view.sessions.some((s) => over(s.key, KEY) || (s.owner !== null && over(s.owner, OWNER))) ? CUT_LIST : "");
}

export function formatApprovals(view: { approvals: ApprovalItem[] }, now = Date.now()): string {
  if (view.approvals.length === 0) return "no approvals pending";
  return approvalTable(view.approvals, now) + (view.approvals.some((a) => over(a.sessionKey, 22)) ? CUT : "");
}

export function formatStuck(view: StuckView, now = Date.now()): string {
  const after = duration(view.olderThanMs);
  if (view.approvals.length + view.requests.length + view.outbound.length === 0) return `nothing stuck for over ${after}`;
  const parts = [`Stuck for over ${after}:`];
  if (view.approvals.length > 0) parts.push("", `Approvals waiting (${view.approvals.length})`, approvalTable(view.approvals, now));
  if (view.requests.length > 0) {
    parts.push(
      "",
      `Requests not moving (${view.requests.length})`,
      table(
        [
          { title: "AGE", width: 7 },
          { title: "STATUS", width: 8 },
          { title: "KIND", width: 8 },
          { title: "SESSION", width: 30 },
          { title: "REQUEST", width: 36 },
        ],
        view.requests.map((r) => [duration(r.ageMs), r.status, r.kind, r.sessionKey, r.id]),
      ),
    );
  }
  if (view.outbound.length > 0) {
    parts.push(
      "",
      `Replies not delivered (${view.outbound.length})`,
      table(
        [
          { title: "AGE", width: 7 },
          { title: "FROM", width: 18 },
          { title: "SESSION", width: 30 },
          { title: "REPLY", width: 36 },
        ],
        view.outbound.map((o) => [duration(o.ageMs), agentLabel(o.agent), o.sessionKey, o.id]),
      ),
    );
  }
  const cut = view.approvals.some((a) => over(a.sessionKey, 22)) || [...view.requests, ...view.outbound].some((r) => over(r.sessionKey, 30));
  return parts.join("\n") + (cut ? CUT : "");
}

export function formatSession(view: SessionDetail, now = Date.now()): string {
  const s = view.session;
  const lines = [
    line("Session", `${s.key} (${s.provider})`),
    line("Owner", s.owner ?? "none"),
    line("Status", `${status(s.status)}, last active ${ago(s.lastActivity, now)}`),
    line("Cost", `${usd(s.costUsd)} (${tokens(s.tokens)} tokens), all time`),
    "",
    "Stack",
  ];
  if (view.framesProblem) lines.push(`  cannot be read: ${clip(clean(view.framesProblem), WIDTH - 18)}`);
  else if (view.frames.length === 0) lines.push("  empty (idle)");
  else {
    lines.push(
      indent(
        table(
          [
            { title: "DEPTH", width: 5, align: "right" },
            { title: "AGENT", width: 24 },
            { title: "TYPE", width: 5 },
            { title: "MODEL", width: 28 },
            { title: "ITERATION", width: 9, align: "right" },
          ],
          view.frames.map((f) => [String(f.depth), agentLabel(f.agent), f.type, f.model, `${f.iteration}/${f.maxIterations}`]),
        ),
      ),
    );
  }
  lines.push("", "Task");
  const t = view.task;
  if (!t) lines.push("  none running");
  else {
    lines.push(
      `  ${line("Id", t.id, 8)}`,
      `  ${line("Status", status(t.status), 8)}`,
      `  ${line("Owner", t.owner, 8)}`,
      `  ${line("Started", `${ago(t.createdAt, now)}, updated ${ago(t.updatedAt, now)}`, 8)}`,
      `  ${line("Cost", `${usd(t.costUsd)} (${tokens(t.tokens)} tokens)`, 8)}`,
    );
  }
  lines.push("", `Pending approvals (${view.approvals.length})`);
  if (view.approvals.length === 0) lines.push("  none");
  else lines.push(indent(approvalTable(view.approvals, now, true)));
  lines.push("", `Last errors (${view.errors.length})`);
  if (view.errors.length === 0) lines.push("  none");
  else {
    lines.push(
      indent(
        table(
          [
            { title: "WHEN", width: 9 },
            { title: "SOURCE", width: 8 },
            { title: "ERROR", width: WIDTH - 2 - 9 - 8 - 4 },
          ],
          view.errors.map((e) => [ago(e.at, now), e.source, e.error]),
        ),
      ),
    );
  }
  return lines.join("\n");
}

/**
 * `inSession`: the approvals of one session, indented under its heading, with the request each paused instead of the
 * session column (its id cut short here; --json has it whole).
 */
function approvalTable(approvals: ApprovalItem[], now: number, inSession = false): string {
  const columns = [
    { title: "ID", width: 13 },
    { title: "AGE", width: 7 },
    { title: "TOOL", width: 12 },
    { title: "AGENT", width: 18 },
    inSession ? { title: "REQUEST", width: 13 } : { title: "SESSION", width: 22 },
    { title: "INPUT", width: inSession ? 25 : 18 },
  ];
  return table(
    columns,
    approvals.map((a) => [a.id, duration(a.ageMs), a.tool, agentLabel(a.agent), inSession ? (a.requestId ?? "-") : a.sessionKey, a.input]),
  );
}

/** "Label    value", the value cleaned and clipped to the line. */
function line(label: string, value: string, width = 9): string {
  return `${label.padEnd(width)}${clip(clean(value), WIDTH - width - 2)}`;
}

function indent(text: string): string {
  return text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");
}

function status(value: string): string {
  return STATUS[value] ?? value;
}

/** Whether a session key is cut short in a column this wide. */
function over(key: string, width: number): boolean {
  return [...clean(key)].length > width;
}
/** The stack as people read it, bottom first; when too long, the top (who has the chat) is what stays. */
function stack(names: string[], width: number): string {
  if (names.length === 0) return "-";
  const labels = names.map((n) => agentLabel(clean(n)));
  const whole = labels.join(" › ");
  return [...whole].length <= width || labels.length === 1 ? whole : `… › ${labels.at(-1)}`;
}
