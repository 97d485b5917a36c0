// The web chat at `/`: one static page, no build step. It talks to the same API as any program.
export const WEB_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Switchboard</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; display: flex; flex-direction: column; height: 100vh; background: #f6f6f4; }
  header { padding: 10px 16px; background: #1f2933; color: #fff; display: flex; gap: 12px; align-items: center; }
  header input { flex: 1; max-width: 320px; }
  #stack { font-size: 13px; opacity: .85; }
  #log { flex: 1; overflow-y: auto; padding: 16px; }
  .msg { max-width: 720px; margin: 6px 0; padding: 8px 12px; border-radius: 8px; background: #fff; white-space: pre-wrap; }
  .me { margin-left: auto; background: #d8ecff; }
  .who { font-size: 12px; color: #52606d; margin-bottom: 2px; }
  .notice { background: #fff7e0; }
  .writing { opacity: 0.75; }
  .approval button { margin-right: 8px; }
  form { display: flex; gap: 8px; padding: 12px 16px; background: #fff; border-top: 1px solid #ddd; }
  form input { flex: 1; padding: 8px; }
</style>
</head>
<body>
<header><strong>Switchboard</strong><input id="token" placeholder="API token" type="password"><span id="stack">idle</span></header>
<div id="log"></div>
<form id="form"><input id="text" placeholder="Message" autocomplete="off"><button>Send</button></form>
<script>
const $ = (id) => document.getElementById(id);
const state = { session: localStorage.getItem("sb.session") || crypto.randomUUID() };
localStorage.setItem("sb.session", state.session);
$("token").value = localStorage.getItem("sb.token") || "";
$("token").onchange = () => localStorage.setItem("sb.token", $("token").value);
const headers = () => ({ "content-type": "application/json", authorization: "Bearer " + $("token").value });

function show(who, text, cls) {
  const div = document.createElement("div");
  div.className = "msg " + (cls || "");
  const label = document.createElement("div");
  label.className = "who";
  label.textContent = who;
  div.append(label, document.createTextNode(text));
  $("log").append(div);
  $("log").scrollTop = $("log").scrollHeight;
  return div;
}

function approval(m) {
  const div = show(m.agent + " · needs approval", m.text, "notice approval");
  for (const decision of ["approve", "deny"]) {
    const b = document.createElement("button");
    b.textContent = decision === "approve" ? "Approve" : "Deny";
    b.dataset.decision = decision;
    b.onclick = async () => {
      div.querySelectorAll("button").forEach((x) => x.remove());
      // The decision streams the turn it resumes, like a message.
      const r = await fetch("/v1/approvals/" + m.approval_id, {
        method: "POST",
        headers: { ...headers(), accept: "text/event-stream" },
        body: JSON.stringify({ decision }),
      });
      if (!r.ok) return show("switchboard", (await r.json()).error.message, "notice");
      show("switchboard", decision === "approve" ? "approved" : "denied", "notice");
      await readEvents(r);
    };
    div.append(b);
  }
}

// The reply being written: a bubble that grows with each delta and becomes the message when it arrives whole.
let writing = null;
function onEvent(event, data) {
  const who = (m) => m.agent + (m.depth > 1 ? " · depth " + m.depth : "");
  if (event === "delta") {
    if (!writing || writing.agent !== data.agent) {
      writing = { agent: data.agent, text: "", div: show(who(data), "", "writing") };
    }
    writing.text += data.text;
    writing.div.lastChild.textContent = writing.text;
    $("log").scrollTop = $("log").scrollHeight;
    return;
  }
  if (event === "message" && writing && writing.agent === data.agent) {
    writing.div.className = "msg" + (data.kind === "message" ? "" : " notice");
    writing.div.lastChild.textContent = data.text;
    writing = null;
    return;
  }
  if (event === "message") {
    if (writing) writing.div.remove();
    writing = null;
    show(who(data), data.text, data.kind === "message" ? "" : "notice");
  }
  if (event === "approval") approval(data);
  if (event === "stack") $("stack").textContent = (data.type === "push" ? "→ " : "← ") + data.agent + " (depth " + data.depth + ")";
  if (event === "done" || event === "error") $("stack").textContent = data.status;
}

$("form").onsubmit = async (e) => {
  e.preventDefault();
  const text = $("text").value.trim();
  if (!text) return;
  $("text").value = "";
  show("you", text, "me");
  const r = await fetch("/v1/messages", {
    method: "POST",
    headers: { ...headers(), accept: "text/event-stream" },
    body: JSON.stringify({ session_id: state.session, items: [{ content_type: "text", content: text }] }),
  });
  if (!r.ok) return show("switchboard", (await r.json()).error.message, "notice");
  await readEvents(r);
};

async function readEvents(r) {
  const reader = r.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let at;
    while ((at = buffer.indexOf("\\n\\n")) >= 0) {
      const chunk = buffer.slice(0, at);
      buffer = buffer.slice(at + 2);
      const event = /^event: (.*)$/m.exec(chunk)?.[1];
      const data = /^data: (.*)$/m.exec(chunk)?.[1];
      if (event && data) onEvent(event, JSON.parse(data));
    }
  }
}
</script>
</body>
</html>
`;
