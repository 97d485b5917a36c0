// The web chat's script (served as /assets/chat.js; the page runs no inline script). It uses the same HTTP API
// as any program: POST /v1/messages streaming events, GET /v1/catalog, GET /v1/sessions/{id}/messages.
// Replies are Markdown rendered by marked and cleaned by DOMPurify before they touch the page; what the user
// wrote, notices and approval texts are shown as plain text.
/* global marked, DOMPurify */
"use strict";

const $ = (id) => document.getElementById(id);
const log = $("log");
// The server accepts no token at all (no HTTP_API_TOKENS, no JWT settings): the page says how to set it up.
const apiOff = document.body.dataset.api === "off";

// crypto.randomUUID exists only on https and localhost; a phone on the LAN opens plain http.
function uuid() {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = [...b].map((x) => x.toString(16).padStart(2, "0")).join("");
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
function newSession() {
  const id = uuid();
  localStorage.setItem("sb.session", id);
  return id;
}
const state = { session: localStorage.getItem("sb.session") || newSession(), turns: 0, historyOf: null };

// ---- Rendering -------------------------------------------------------------------------------------------
const escapeHtml = (s) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
// Raw HTML in a reply is shown as the text it is, never as markup; images become links (the page loads nothing
// from elsewhere).
const markdown = new marked.Marked({
  gfm: true,
  breaks: true,
  renderer: {
    html: (token) => escapeHtml(token.text),
    image: (token) => `<a href="${escapeHtml(token.href)}">${escapeHtml(token.text || token.href)}</a>`,
  },
});
DOMPurify.addHook("afterSanitizeAttributes", (node) => {
  if (node.tagName === "A") {
    node.setAttribute("target", "_blank");
    node.setAttribute("rel", "noopener noreferrer");
  }
});
function renderMarkdown(el, text) {
  el.innerHTML = DOMPurify.sanitize(markdown.parse(text), { RETURN_TRUSTED_TYPE: true, FORBID_ATTR: ["style"] });
}

/** "main" → "Switchboard", "skill:interview" → "Interview skill", "agent:trip-planner" → "Trip planner agent". */
function label(agent) {
  if (agent === "main" || agent === "switchboard") return "Switchboard";
  const m = /^(skill|agent):(.+)$/.exec(agent || "");
  if (!m) return agent || "Switchboard";
  const words = m[2].replace(/[-_]+/g, " ").trim();
  return `${words.charAt(0).toUpperCase()}${words.slice(1)} ${m[1]}`;
}

function bubble(who, cls, where = log) {
  const div = document.createElement("div");
  div.className = `msg ${cls}`;
  const name = document.createElement("div");
  name.className = "who";
  name.textContent = who;
  const body = document.createElement("div");
  body.className = "body";
  div.append(name, body);
  where.append(div);
  log.scrollTop = log.scrollHeight;
  return div;
}
const body = (div) => div.querySelector(".body");
function plain(who, text, cls, where) {
  const div = bubble(who, `plain ${cls}`, where);
  body(div).textContent = text;
  return div;
}
/** A reply from the bot: Markdown for a message, plain text for notices and errors. */
function reply(m, where) {
  if (m.kind !== "message") return plain(label(m.agent), m.text, m.kind === "error" ? "error" : "notice", where);
  const div = bubble(label(m.agent), "", where);
  renderMarkdown(body(div), m.text);
  return div;
}

function approval(m, status, where) {
  const div = plain(`${label(m.agent)} needs your approval`, m.text, "notice approval", where);
  if (status !== "pending") {
    const note = document.createElement("div");
    note.className = "decided";
    note.textContent = status ? `(${status})` : "(no longer pending)";
    return div.append(note);
  }
  for (const decision of ["approve", "deny"]) {
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = decision === "approve" ? "Approve" : "Deny";
    b.dataset.decision = decision;
    b.onclick = () => {
      div.querySelectorAll("button").forEach((x) => x.remove());
      // The decision streams the turn it resumes, like a message.
      void send(`/v1/approvals/${encodeURIComponent(m.approval_id)}`, { decision }, decision === "approve" ? "approved" : "denied");
    };
    div.append(b);
  }
}

// ---- The header's status ------------------------------------------------------------------------------------
function status(text, busy) {
  $("status").textContent = text;
  $("status").classList.toggle("busy", busy);
}
function settle() {
  if (state.turns === 0) status("ready", false);
}

// ---- Notices about the token -----------------------------------------------------------------------------------
// What was said about a missing or refused token (or a server that could not be reached) is stale once a request
// with the token works: it goes away then.
const SETUP = "setup";
function setupProblem(text, where) {
  return plain("Switchboard", text, `error ${SETUP}`, where);
}
function tokenWorks() {
  log.querySelectorAll(`.${SETUP}`).forEach((el) => el.remove());
}

// ---- Talking to the API -------------------------------------------------------------------------------------
const token = () => $("token").value.trim();
const authorized = (extra = {}) => ({ authorization: `Bearer ${token()}`, ...extra });
async function problem(r) {
  const data = await r.json().catch(() => null);
  return data?.error?.message || `${r.status} ${r.statusText}`;
}

/** One request whose turn streams back: a "thinking…" bubble until the first piece arrives, then the reply. */
async function send(path, payload, said) {
  // Files go as multipart/form-data (the browser sets its boundary), everything else as JSON.
  const form = payload instanceof FormData;
  state.turns += 1;
  status("thinking…", true);
  // `writing`: per agent, the bubble growing with its deltas until its whole message arrives.
  // `said`: the texts of this turn's messages (an error event repeating one of them is not shown twice).
  const turn = { placeholder: bubble("Switchboard", "placeholder"), writing: new Map(), said: [] };
  body(turn.placeholder).textContent = "thinking…";
  try {
    const headers = authorized({ ...(form ? {} : { "content-type": "application/json" }), accept: "text/event-stream" });
    const r = await fetch(path, { method: "POST", headers, body: form ? payload : JSON.stringify(payload) });
    if (r.status === 401) return void setupProblem(`That token did not work: ${await problem(r)}`);
    if (!r.ok) return void plain("Switchboard", await problem(r), "error");
    tokenWorks();
    // From now on the server has this conversation, and a reload asks for it.
    localStorage.setItem("sb.used", state.session);
    if (said) turn.placeholder.before(plain("Switchboard", said, "notice", document.createDocumentFragment()));
    await readEvents(r, (event, data) => onEvent(turn, event, data));
  } catch (error) {
    setupProblem(`The server could not be reached: ${error.message}`);
  } finally {
    turn.placeholder?.remove();
    for (const w of turn.writing.values()) w.div.classList.remove("writing");
    state.turns -= 1;
    settle();
  }
}

function onEvent(turn, event, data) {
  const unplace = () => {
    turn.placeholder?.remove();
    turn.placeholder = null;
  };
  switch (event) {
    case "delta": {
      unplace();
      let w = turn.writing.get(data.agent);
      if (!w) turn.writing.set(data.agent, (w = { text: "", div: bubble(label(data.agent), "writing") }));
      w.text += data.text;
      renderMarkdown(body(w.div), w.text);
      log.scrollTop = log.scrollHeight;
      return;
    }
    case "reset": {
      // The model call failed midway and starts over: what the bubble showed is void; the next deltas rewrite it.
      const w = turn.writing.get(data.agent);
      if (w) w.text = "";
      if (w) renderMarkdown(body(w.div), "");
      return;
    }
    case "message": {
      unplace();
      turn.said.push(data.text);
      const w = turn.writing.get(data.agent);
      turn.writing.delete(data.agent);
      // The bubble that grew becomes the message, in place.
      if (w) return void w.div.replaceWith(reply(data, document.createDocumentFragment()));
      return void reply(data);
    }
    case "approval":
      unplace();
      return approval(data, "pending");
    case "file":
      unplace();
      fileFromAgent(data);
      return;
    case "stack": {
      const working = data.type === "push" ? `${label(data.agent)} is working…` : "thinking…";
      status(working, true);
      if (turn.placeholder) body(turn.placeholder).textContent = working;
      else if (data.type === "push" && turn.writing.size === 0) {
        turn.placeholder = bubble("Switchboard", "placeholder");
        body(turn.placeholder).textContent = working;
      }
      return;
    }
    case "error": {
      unplace();
      // A refusal (a daily limit) was already said as the turn's last message: the event only ends the turn.
      const why = data?.error?.message || "the request failed";
      if (!turn.said.some((t) => t.includes(why))) plain("Switchboard", why, "error");
      return;
    }
    case "done":
      unplace();
      return;
  }
}

async function readEvents(r, on) {
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let at;
    while ((at = buffer.indexOf("\n\n")) >= 0) {
      const chunk = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const event = /^event: (.*)$/m.exec(chunk)?.[1];
      const data = /^data: (.*)$/m.exec(chunk)?.[1];
      if (event && data) on(event, JSON.parse(data));
    }
  }
}

// ---- Files ------------------------------------------------------------------------------------------------------
// Only raster images are ever shown, from object URLs of bytes the page holds or fetched with the token; anything
// else, SVG above all (it may carry script), is a name and a download.
const PREVIEWABLE = new Set(["image/jpeg", "image/png", "image/gif", "image/webp"]);
const attachments = [];
function size(bytes) {
  if (bytes >= 1048576) return `${(bytes / 1048576).toFixed(1)} MB`;
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KB` : `${bytes} bytes`;
}
function preview(blob) {
  const img = document.createElement("img");
  img.alt = "";
  img.src = URL.createObjectURL(blob);
  return img;
}
function renderAttachments() {
  const box = $("attachments");
  for (const img of box.querySelectorAll("img")) URL.revokeObjectURL(img.src);
  box.replaceChildren(
    ...attachments.map((file, i) => {
      const chip = document.createElement("div");
      chip.className = "chip";
      if (PREVIEWABLE.has(file.type)) chip.append(preview(file));
      const name = document.createElement("span");
      name.className = "name";
      name.textContent = `${file.name} (${size(file.size)})`;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "✕";
      remove.title = `Remove ${file.name}`;
      remove.onclick = () => {
        attachments.splice(i, 1);
        renderAttachments();
      };
      chip.append(name, remove);
      return chip;
    }),
  );
  box.hidden = attachments.length === 0;
}
function attach(files) {
  for (const file of files) attachments.push(file);
  renderAttachments();
}
$("files").onchange = () => {
  attach($("files").files);
  $("files").value = "";
};
$("text").addEventListener("paste", (e) => {
  const files = [...(e.clipboardData?.files ?? [])];
  if (files.length === 0) return;
  e.preventDefault();
  attach(files);
});
const dragsFiles = (e) => [...(e.dataTransfer?.types ?? [])].includes("Files");
document.addEventListener("dragover", (e) => {
  if (!dragsFiles(e)) return;
  e.preventDefault();
  document.body.classList.add("dropping");
});
document.addEventListener("dragleave", (e) => {
  if (!e.relatedTarget) document.body.classList.remove("dropping");
});
document.addEventListener("drop", (e) => {
  document.body.classList.remove("dropping");
  if (!e.dataTransfer?.files.length) return;
  e.preventDefault();
  attach(e.dataTransfer.files);
});

/** A file an agent sent (`file` event: {file_id, filename, mime, url, agent, caption?}): an inline image, or a download. */
function fileFromAgent(f, where) {
  const div = bubble(label(f.agent), "plain file", where);
  const link = document.createElement("button");
  link.type = "button";
  link.textContent = `⬇ ${f.filename}`;
  const fetched = () => fetch(f.url, { headers: authorized() }).then((r) => (r.ok ? r.blob() : Promise.reject(new Error(`${r.status}`))));
  link.onclick = () =>
    fetched().then(
      (blob) => {
        const a = document.createElement("a");
        a.href = URL.createObjectURL(blob);
        a.download = f.filename;
        a.click();
        setTimeout(() => URL.revokeObjectURL(a.href), 60000);
      },
      (error) => plain("Switchboard", `${f.filename} could not be downloaded (${error.message}).`, "error"),
    );
  body(div).append(link);
  if (f.caption) body(div).append(Object.assign(document.createElement("p"), { textContent: f.caption }));
  if (PREVIEWABLE.has(f.mime))
    void fetched().then(
      (blob) => link.before(Object.assign(preview(blob), { className: "file" })),
      () => {},
    );
}

// ---- Welcome, what the bot can do, and the conversation so far ----------------------------------------------
const welcome = bubble("Switchboard", "welcome");
const history = document.createElement("div");
log.append(history);
{
  const intro = document.createElement("p");
  intro.textContent =
    "Hi! This is Switchboard's web chat: an assistant that can hand your conversation to specialised skills and agents. " +
    "Replies appear as they are written, and the conversation is kept on the server, so it is still here when you reload.";
  const how = document.createElement("p");
  how.textContent = apiOff
    ? "This server does not accept any API token yet, so nobody can chat here until it does. Whoever runs it sets " +
      "HTTP_API_TOKENS in the server's environment or .env (token:user pairs, e.g. HTTP_API_TOKENS=a-long-random-token:alice), " +
      "or HTTP_JWT_JWKS_URL with HTTP_JWT_AUDIENCE and HTTP_JWT_ISSUER for tokens from an identity provider, and restarts it. " +
      "Then enter your token above."
    : "To start, enter an API token above. Tokens come from the server's HTTP_API_TOKENS (token:user pairs in its .env); " + "ask whoever runs this server for one.";
  const catalog = document.createElement("div");
  catalog.id = "catalog";
  catalog.textContent = apiOff ? "" : "Once your token is in, the skills and agents you can use are listed here.";
  body(welcome).append(intro, how, catalog);
  if (apiOff) {
    welcome.classList.add("off");
    status("no API tokens set", false);
    for (const id of ["token", "text"]) $(id).disabled = true;
    $("form").querySelector("button").disabled = true;
  }
}

function list(title, defs) {
  const frag = document.createDocumentFragment();
  if (defs.length === 0) return frag;
  const head = document.createElement("strong");
  head.textContent = title;
  const ul = document.createElement("ul");
  for (const d of defs) {
    const li = document.createElement("li");
    const name = document.createElement("strong");
    name.textContent = d.name;
    li.append(name, `: ${d.description}`);
    ul.append(li);
  }
  frag.append(head, ul);
  return frag;
}

async function loadCatalog() {
  const box = $("catalog");
  const r = await fetch("/v1/catalog", { headers: authorized() });
  if (!r.ok) return void (box.textContent = `That token did not work: ${await problem(r)}`);
  tokenWorks();
  const { skills, agents } = await r.json();
  box.replaceChildren(list("Skills", skills), list("Agents", agents));
  if (skills.length + agents.length === 0) box.textContent = "No skills or agents are installed yet.";
}

/** The line the model reads before a scheduled run's instruction (src/gateway/scheduler.ts): the mark says it instead. */
const SCHEDULED_MARKER = /^\[Scheduled run of job [^\]\n]*\]\n\n/;
function markScheduled(div, run) {
  div.classList.add("scheduled");
  const mark = document.createElement("span");
  mark.className = "mark";
  mark.textContent = "scheduled";
  mark.title = `Job ${run.job_id}, due ${new Date(run.due_at).toLocaleString()}`;
  div.querySelector(".who").append(" ", mark);
}

async function loadHistory() {
  const key = `${state.session} ${token()}`;
  if (state.historyOf === key || localStorage.getItem("sb.used") !== state.session) return;
  state.historyOf = key;
  const r = await fetch(`/v1/sessions/${state.session}/messages`, { headers: authorized() });
  if (r.status === 404 || r.status === 401) return; // a new conversation, or a token the catalog already complained about
  if (r.status === 403) {
    state.session = newSession();
    return void plain("Switchboard", "The conversation saved in this browser belongs to another user; this is a new one.", "notice", history);
  }
  if (!r.ok) return void plain("Switchboard", `The conversation could not be loaded: ${await problem(r)}`, "error", history);
  const { messages } = await r.json();
  history.replaceChildren();
  // A scheduled job's run: the owner's instruction from earlier, and the replies to it, each marked "scheduled".
  const runs = new Map();
  for (const m of messages) {
    if (m.role === "user" && m.scheduled) runs.set(m.request_id, m.scheduled);
    if (m.role === "user") plain("You", m.scheduled ? m.text.replace(SCHEDULED_MARKER, "") : m.text, "me", history);
    else if (m.approval_id) approval(m, m.approval?.status, history);
    else if (m.file) fileFromAgent(m.file, history);
    else reply(m, history);
    if (runs.has(m.request_id)) markScheduled(history.lastElementChild, runs.get(m.request_id));
  }
  log.scrollTop = log.scrollHeight;
}

async function start() {
  if (!token() || apiOff) return;
  try {
    await Promise.all([loadCatalog(), loadHistory()]);
  } catch (error) {
    setupProblem(`The server could not be reached: ${error.message}`);
  }
}

$("token").value = localStorage.getItem("sb.token") || "";
$("token").onchange = () => {
  localStorage.setItem("sb.token", token());
  void start();
};
$("new").onclick = () => {
  state.session = newSession();
  state.historyOf = `${state.session} ${token()}`;
  history.replaceChildren();
  while (history.nextSibling) history.nextSibling.remove();
};
$("form").onsubmit = (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text && attachments.length === 0) return;
  if (!token()) {
    $("token").focus();
    return void plain("Switchboard", "Enter your API token first (top of the page).", `notice ${SETUP}`);
  }
  $("text").value = "";
  const files = attachments.splice(0);
  renderAttachments();
  plain("You", [text, ...files.map((f) => `📎 ${f.name}`)].filter(Boolean).join("\n"), "me");
  if (files.length === 0) return void send("/v1/messages", { session_id: state.session, items: [{ content_type: "text", content: text }] });
  const form = new FormData();
  form.append("session_id", state.session);
  if (text) form.append("text", text);
  for (const file of files) form.append("file", file, file.name);
  void send("/v1/messages", form);
};
void start();
