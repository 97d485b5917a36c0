// The admin page's script (served as /admin/assets/admin.js; the page runs no inline script). It reads the admin
// API only: a live stream of snapshots (GET /admin/api/events, read with fetch because EventSource cannot send an
// Authorization header) and one session's detail on demand. Read-only: nothing here changes anything.
// Every value is written with textContent or as a text node: session keys, tool inputs and errors come from users
// and models, and the page's policy refuses any HTML written from script anyway.
"use strict";

const $ = (id) => document.getElementById(id);
const KEY = "sb.admin.token";
const state = { token: sessionStorage.getItem(KEY) || "", generation: 0, abort: null, retry: null, backoff: 1000, open: null, detailSeq: 0 };

// ---- Small DOM and text helpers -----------------------------------------------------------------------------
function el(tag, cls, ...children) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) if (c !== null && c !== undefined) e.append(typeof c === "string" || typeof c === "number" ? String(c) : c);
  return e;
}
function duration(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 && h < 10 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 && d < 10 ? `${d}d ${h % 24}h` : `${d}d`;
}
const ago = (at, now) => (now - at < 0 ? `in ${duration(at - now)}` : now - at < 1000 ? "just now" : `${duration(now - at)} ago`);
const usd = (v) => (v === 0 ? "$0" : Math.abs(v) < 1 ? `$${v.toFixed(4)}` : `$${v.toFixed(2)}`);
const tokens = (v) => (v < 1000 ? String(v) : v < 1e6 ? `${(v / 1e3).toFixed(1).replace(/\.0$/, "")}k` : `${(v / 1e6).toFixed(1).replace(/\.0$/, "")}M`);
const STATUS = { waiting_user: "waiting user", waiting_approval: "needs approval" };
const statusText = (s) => STATUS[s] ?? String(s);
/** "main" → "Switchboard", "skill:interview" → "Interview skill", "agent:trip-planner" → "Trip planner agent". */
function label(agent) {
  if (agent === "main" || agent === "switchboard") return "Switchboard";
  const m = /^(skill|agent):(.+)$/.exec(agent || "");
  if (!m) return agent || "?";
  const words = m[2].replace(/[-_]+/g, " ").trim();
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} ${m[1]}`;
}

/** A table that becomes a list of cards on a phone (each cell names its column). */
function table(columns, rows) {
  if (rows.length === 0) return el("p", "empty", "none");
  const head = el("tr", null, ...columns.map((c) => el("th", null, c)));
  const body = rows.map((cells) =>
    el(
      "tr",
      null,
      ...cells.map((cell, i) => {
        const td = el("td", null, cell);
        td.dataset.label = columns[i];
        return td;
      }),
    ),
  );
  return el("div", "scroll", el("table", null, el("thead", null, head), el("tbody", null, ...body)));
}
function fill(id, ...children) {
  $(id)
    .querySelector(".body")
    .replaceChildren(...children);
}
function status(text, cls) {
  $("status").textContent = text;
  $("status").className = cls || "";
}
function notice(text) {
  $("notice").hidden = !text;
  $("notice").textContent = text || "";
}

// ---- Rendering a snapshot -----------------------------------------------------------------------------------
function sessionButton(key) {
  const b = el("button", "link", key);
  b.type = "button";
  b.title = "Show this session";
  b.onclick = () => void openSession(key);
  return b;
}
const approvalRows = (list, now) =>
  list.map((a) => [
    a.tool,
    sessionButton(a.sessionKey),
    label(a.agent),
    el("code", null, a.requestId || "-"),
    duration(a.ageMs),
    ago(a.expiresAt, now),
    el("code", null, a.input),
  ]);
const APPROVAL_COLUMNS = ["Tool", "Session", "Agent", "Paused request", "Waiting", "Expires", "Input"];

function render(snap) {
  const c = snap.counts;
  const tiles = [
    ["Active stacks", c.activeStacks],
    ["Queued", c.queuedMessages],
    ["Pending approvals", c.pendingApprovals],
    ["Undeliverable", c.undeliverable],
    ["Outbox backlog", c.outboxBacklog],
  ];
  $("counts").replaceChildren(...tiles.map(([name, n]) => el("div", "count", el("span", "n", n), el("span", "what", name))));

  const stuck = snap.stuck;
  const anyStuck = stuck.approvals.length + stuck.requests.length + stuck.outbound.length > 0;
  $("stuck").hidden = !anyStuck;
  $("stuck").querySelector("h2").textContent = `Stuck for over ${duration(stuck.olderThanMs)}`;
  if (anyStuck) {
    const parts = [];
    if (stuck.approvals.length) parts.push(el("h3", null, "Approvals waiting"), table(APPROVAL_COLUMNS, approvalRows(stuck.approvals, snap.at)));
    if (stuck.requests.length) {
      parts.push(
        el("h3", null, "Requests not moving"),
        table(
          ["Session", "Kind", "Status", "For", "Request"],
          stuck.requests.map((r) => [sessionButton(r.sessionKey), r.kind, r.status, duration(r.ageMs), el("code", null, r.id)]),
        ),
      );
    }
    if (stuck.outbound.length) {
      parts.push(
        el("h3", null, "Replies not delivered"),
        table(
          ["Session", "From", "For", "Reply"],
          stuck.outbound.map((o) => [sessionButton(o.sessionKey), label(o.agent), duration(o.ageMs), el("code", null, o.id)]),
        ),
      );
    }
    fill("stuck", ...parts);
  }
  fill("approvals", table(APPROVAL_COLUMNS, approvalRows(snap.approvals, snap.at)));
  fill(
    "sessions",
    table(
      ["Session", "Status", "Stack", "Cost", "Tokens", "Approvals", "Active"],
      snap.sessions.map((s) => [
        sessionButton(s.key),
        statusText(s.status),
        s.stack.length ? s.stack.map(label).join(" › ") : "-",
        usd(s.costUsd),
        tokens(s.tokens),
        String(s.pendingApprovals),
        ago(s.lastActivity, snap.at),
      ]),
    ),
  );
  fill(
    "usage",
    snap.usage.length
      ? table(
          ["User", "Day", "Messages", "Cost", "Last"],
          snap.usage.map((u) => [u.user, u.day, String(u.messages), usd(u.costUsd), ago(u.updatedAt, snap.at)]),
        )
      : el("p", "empty", "Nobody has used anything today."),
  );
  if (state.open !== null) void openSession(state.open, true);
  void refreshMcp(snap.at);
}

// ---- MCP servers (this replica's connections; not in the store, so read beside the snapshots) ---------------
let mcpReadAt = 0;
async function refreshMcp(now) {
  if (now - mcpReadAt < 5000) return;
  mcpReadAt = now;
  const r = await fetch("/admin/api/mcp", { headers: auth(), cache: "no-store" }).catch(() => null);
  if (!r || !r.ok) return;
  const { servers } = await r.json();
  $("mcp").hidden = servers.length === 0;
  fill(
    "mcp",
    table(
      ["Server", "Transport", "Status", "Since", "Tools", "Last error"],
      servers.map((s) => [s.name, s.transport, s.status, ago(s.since, Date.now()), String(s.tools.length), s.lastError ?? "-"]),
    ),
  );
}

// ---- One session ----------------------------------------------------------------------------------------------
function field(name, value) {
  return el("div", "field", el("span", "name", name), el("span", "value", value));
}
async function openSession(key, refresh = false) {
  state.open = key;
  const seq = ++state.detailSeq;
  const section = $("detail");
  section.hidden = false;
  const r = await fetch(`/admin/api/sessions/${encodeURIComponent(key)}`, { headers: auth(), cache: "no-store" }).catch(() => null);
  if (seq !== state.detailSeq) return;
  if (!r || !r.ok) {
    const problem = r ? ((await r.json().catch(() => null))?.error?.message ?? `${r.status}`) : "the server could not be reached";
    if (!refresh) fill("detail", el("p", "error", `${key}: ${problem}`), closeButton());
    return;
  }
  const d = await r.json();
  if (seq !== state.detailSeq) return;
  const now = Date.now();
  const s = d.session;
  const parts = [
    el("h3", "key", s.key),
    field("Provider", s.provider),
    field("Owner", s.owner ?? "none"),
    field("Status", statusText(s.status)),
    field("Last active", ago(s.lastActivity, now)),
    field("Cost", `${usd(s.costUsd)} (${tokens(s.tokens)} tokens, all time)`),
    el("h3", null, "Stack"),
    d.framesProblem
      ? el("p", "error", `cannot be read: ${d.framesProblem}`)
      : table(
          ["Depth", "Agent", "Type", "Model", "Iteration"],
          d.frames.map((f) => [String(f.depth), label(f.agent), f.type, f.model, `${f.iteration}/${f.maxIterations}`]),
        ),
    el("h3", null, "Task"),
  ];
  const t = d.task;
  if (!t) parts.push(el("p", "empty", "none running"));
  else
    parts.push(
      field("Id", t.id),
      field("Status", statusText(t.status)),
      field("Owner", t.owner),
      field("Started", ago(t.createdAt, now)),
      field("Updated", ago(t.updatedAt, now)),
      field("Cost", `${usd(t.costUsd)} (${tokens(t.tokens)} tokens)`),
    );
  parts.push(el("h3", null, "Pending approvals"), table(APPROVAL_COLUMNS, approvalRows(d.approvals, now)));
  parts.push(
    el("h3", null, "Last errors"),
    table(
      ["When", "Source", "Error"],
      d.errors.map((e) => [ago(e.at, now), e.source, e.error]),
    ),
  );
  parts.push(closeButton());
  fill("detail", ...parts);
  if (!refresh) section.scrollIntoView({ block: "start" });
}
function closeButton() {
  const b = el("button", null, "Close");
  b.type = "button";
  b.onclick = () => {
    state.open = null;
    state.detailSeq += 1;
    $("detail").hidden = true;
  };
  return b;
}

// ---- The live stream ----------------------------------------------------------------------------------------
const auth = () => ({ authorization: `Bearer ${state.token}` });

async function connect() {
  const generation = ++state.generation;
  state.abort?.abort();
  clearTimeout(state.retry);
  if (!state.token) return status("enter the admin token", "");
  const abort = new AbortController();
  state.abort = abort;
  status(state.backoff > 1000 ? "reconnecting…" : "connecting…", "busy");
  try {
    const r = await fetch("/admin/api/events", { headers: auth(), signal: abort.signal, cache: "no-store" });
    if (r.status === 401) {
      sessionStorage.removeItem(KEY);
      notice("That token was refused. Use a token from the gateway's ADMIN_TOKENS (HTTP API tokens do not work here).");
      return status("token refused", "error");
    }
    if (r.status === 404) {
      notice("The admin view is off. Set ADMIN_TOKENS in the gateway's environment and restart it.");
      return status("off", "error");
    }
    if (!r.ok) throw new Error(`${r.status}`);
    notice(null);
    await readEvents(r, (event, data) => {
      if (generation !== state.generation) return;
      if (event === "snapshot") {
        state.backoff = 1000;
        status("live", "live");
        render(data);
      } else if (event === "problem") notice(data.message);
    });
  } catch {
    // a dropped connection: reconnect below
  }
  if (generation !== state.generation || abort.signal.aborted) return;
  status("reconnecting…", "busy");
  state.retry = setTimeout(() => void connect(), state.backoff);
  state.backoff = Math.min(state.backoff * 2, 15000);
}

/** Server-Sent Events from a fetch body: `event:` and `data:` lines, comments (keepalives) skipped. */
async function readEvents(r, on) {
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let at;
    while ((at = buffer.indexOf("\n\n")) >= 0) {
      const chunk = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      let event = "message";
      const data = [];
      for (const line of chunk.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) on(event, JSON.parse(data.join("\n")));
    }
  }
}

$("token").value = state.token;
$("login").onsubmit = (e) => {
  e.preventDefault();
  state.token = $("token").value.trim();
  sessionStorage.setItem(KEY, state.token);
  state.backoff = 1000;
  void connect();
};
void connect();
