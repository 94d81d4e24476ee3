/**
 * The web console's page (docs/console.md): signs in (./signin.js), then
 * shows the live queue (server-sent events) and the history, and answers
 * through the console API with the session's CSRF token, offering what the
 * request's Slack message offers (dialogs in ./dialogs.js). A read-only
 * session (an admin token) sees every request and the audit log, and no
 * buttons. preact + htm render everything: agent-supplied strings only
 * ever reach the DOM as text nodes (never innerHTML or markdown).
 */
import { h, render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import htm from "htm";
import { Dialog } from "./dialogs.js";
import { SignIn, signInFromFragment } from "./signin.js";
// What runs is what is shown (issue 16): invisible and direction-changing characters as ⟨U+202E⟩, as in Slack.
import { anyHidden, visibleJson, visibleText } from "../../src/protocol/visible-text.ts";
import { collapseBlankRuns, commandLabel } from "../../src/slack/blocks/text.ts";
import { auditDroppedText } from "../../src/protocol/texts.ts";

const html = htm.bind(h);
/** An agent's string as shown: hidden characters marked (answers and edits keep the raw value). */
const v = (text) => (typeof text === "string" ? visibleText(text) : text);
const API = "/console/api";
let csrf = "";

/** Calls the console API; throws an Error with the relay's message (and `status`) on a refusal. */
async function call(path, init = {}) {
  const reply = await fetch(`${API}${path}`, {
    method: init.method ?? "GET",
    credentials: "same-origin",
    headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...(init.method === "POST" ? { "x-csrf-token": csrf } : {}) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const json = await reply.json().catch(() => ({}));
  if (!reply.ok) throw Object.assign(new Error(json.error?.message ?? `HTTP ${reply.status}`), { status: reply.status });
  return json;
}

const KIND_NAMES = { permission: "Permission request", step_gate: "Proposed action", ask_user_question: "Question", interactive_questions: "Questions" };

function left(expiresAt, now) {
  const s = Math.max(0, Math.round((Date.parse(expiresAt) - now) / 1000));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function Diff({ before, after }) {
  return html`<pre>
${String(before ?? "")
      .split("\n")
      .map((line) => html`<div class="diff-del">- ${v(line)}</div>`)}${String(after ?? "")
      .split("\n")
      .map((line) => html`<div class="diff-add">+ ${v(line)}</div>`)}</pre>`;
}

function ToolView({ body }) {
  const input = body.input ?? {};
  if (body.toolName === "Edit")
    return html`<div class="meta">${v(input.file_path)}</div>
      <${Diff} before=${input.old_string} after=${input.new_string} />`;
  if (body.toolName === "MultiEdit")
    return html`<div class="meta">${v(input.file_path)}</div>
      ${(input.edits ?? []).map((e) => html`<${Diff} before=${e.old_string} after=${e.new_string} />`)}`;
  if (body.toolName === "Write")
    return html`<div class="meta">${v(input.file_path)}</div>
      <${Diff} before="" after=${input.content} />`;
  // A command as in Slack: its line count, runs of blank lines collapsed and counted, so padding cannot push its tail out of sight.
  if (typeof input.command === "string") {
    const { command, ...rest } = input;
    const shown = collapseBlankRuns(command);
    return html`<div class="meta command-label">${commandLabel(command, shown.collapsed)}</div>
      <pre class="command">${v(shown.text)}</pre>
      ${Object.keys(rest).length > 0 ? html`<pre>${visibleJson(JSON.stringify(rest, null, 2))}</pre>` : ""}`;
  }
  return html`<pre>${visibleJson(JSON.stringify(input, null, 2))}</pre>`;
}

function Questions({ request, answer }) {
  const body = request.body;
  const [values, setValues] = useState({});
  const set = (key, value) => setValues({ ...values, [key]: value });
  if (body.kind === "ask_user_question") {
    const submit = () =>
      answer({
        answers: Object.fromEntries(
          body.questions.map((q) => [q.question, Array.isArray(values[q.question]) ? values[q.question].join(", ") : (values[q.question] ?? "")]),
        ),
      });
    return html`${body.questions.map(
        (q) =>
          html`<fieldset>
            <legend>${v(q.header)}: ${v(q.question)}</legend>
            ${q.options.map(
              (o) =>
                html`<label class="q"
                    ><input
                      type=${q.multiSelect ? "checkbox" : "radio"}
                      name=${q.question}
                      onChange=${(e) => {
                        const chosen = values[q.question] ?? [];
                        set(q.question, q.multiSelect ? (e.target.checked ? [...chosen, o.label] : chosen.filter((l) => l !== o.label)) : o.label);
                      }}
                    />
                    ${v(o.label)} <span class="meta">${v(o.description)}</span></label
                  >${o.preview ? html`<pre class="preview">${v(o.preview)}</pre>` : ""}`,
            )}
            <label class="q">Other: <input type="text" onInput=${(e) => set(q.question, e.target.value)} /></label>
          </fieldset>`,
      )}<button class="primary" onClick=${submit}>Submit</button>`;
  }
  const submit = () => answer({ answers: values });
  return html`${body.questions.map((q) => {
      const label = html`${v(q.question)}${q.required === false ? "" : " *"}${q.pattern ? html` <span class="meta">(${v(q.pattern)})</span>` : ""}`;
      if (q.type === "confirm")
        return html`<label class="q"><input type="checkbox" checked=${q.default === true} onChange=${(e) => set(q.id, e.target.checked)} /> ${label}</label>`;
      if (q.type === "choice")
        return html`<label class="q"
          >${label}
          <select onChange=${(e) => set(q.id, e.target.value)}>
            <option value="">—</option>
            ${(q.options ?? []).map((o) => html`<option value=${o} selected=${q.default === o}>${v(o)}</option>`)}
          </select></label
        >`;
      if (q.type === "multiChoice") {
        // The default shows checked (as Slack's modal pre-selects it) until the person changes it.
        const chosen = values[q.id] ?? (Array.isArray(q.default) ? q.default : []);
        return html`<fieldset>
          <legend>${label}</legend>
          ${(q.options ?? []).map(
            (o) =>
              html`<label class="q"
                ><input
                  type="checkbox"
                  checked=${chosen.includes(o)}
                  onChange=${(e) => set(q.id, e.target.checked ? [...chosen.filter((x) => x !== o), o] : chosen.filter((x) => x !== o))}
                />
                ${v(o)}</label
              >`,
          )}
        </fieldset>`;
      }
      return html`<label class="q">${label} <input type="text" placeholder=${v(q.default) ?? ""} onInput=${(e) => set(q.id, e.target.value)} /></label>`;
    })}<button class="primary" onClick=${submit}>Submit</button>`;
}

/** The buttons of the request's Slack message (`request.offers`, decided by the relay), with Slack's names. */
function Actions({ request, act, open }) {
  const body = request.body;
  const offers = request.offers ?? {};
  const answer = (decision) => act(request, "answer", { decision });
  const rule = offers.rule ? html`<button onClick=${() => act(request, "allow-for-a-while")}>${offers.rule}</button>` : "";
  const moreTime = html`<button onClick=${() => act(request, "more-time")}>+30 min</button>`;
  if (body.kind === "step_gate")
    return html`<div class="actions">
      <button class="primary" onClick=${() => answer({ reply: "y" })}>Yes</button>
      ${rule}
      <button onClick=${() => answer({ reply: "n" })}>No</button>
      <button class="danger" onClick=${() => answer({ reply: "q" })}>Stop</button>
      ${moreTime}
    </div>`;
  if (body.kind === "permission")
    return html`<div class="actions">
      <button class="primary" onClick=${() => answer({ behavior: "allow", updatedInput: body.input })}>${offers.allow ?? "Allow"}</button>
      ${rule}
      ${
        offers.alwaysAllow
          ? html`<button onClick=${() => answer({ behavior: "allow", updatedInput: body.input, updatedPermissions: offers.alwaysAllow })}>Always allow</button>`
          : ""
      }
      ${offers.edit ? html`<button onClick=${() => open("edit", request)}>Edit…</button>` : ""}
      <button class="danger" onClick=${() => act(request, "answer", { decision: { behavior: "deny", message: deniedBy() } })}>Deny</button>
      <button onClick=${() => open("deny", request)}>Deny with reason…</button>
      <button class="danger" onClick=${() => open("stop", request)}>Deny & stop</button>
      ${moreTime}
    </div>`;
  return html`<div class="actions"><${Questions} request=${request} answer=${answer} />${moreTime}</div>`;
}

let person;
/** What the agent reads when Deny is clicked without a reason, as Slack's "Denied by <name> in Slack.". */
const deniedBy = () => `Denied by ${person?.name ?? person?.id ?? "the console"} in the console.`;

function Request({ request, selected, now, act, open, readOnly }) {
  const body = request.body;
  const pending = request.status === "pending";
  return html`<article class=${`request ${selected ? "selected" : ""} ${pending ? "" : "ended"}`} data-id=${request.id}>
    <h2>${KIND_NAMES[body.kind]}${body.title ? html`: ${v(body.title)}` : ""}</h2>
    ${anyHidden(body) ? html`<p class="warning">⚠️ Hidden or direction-changing characters are shown as ⟨U+…⟩ where they are.</p>` : ""}
    <div class="meta">
      ${v(body.agent?.name) ?? request.token} · ${request.channel} ${Object.entries(body.labels ?? {}).map(([key, value]) => html` · ${key}=${value}`)}
      ${pending ? html` · <span class="countdown">${left(request.expiresAt, now)}</span> left` : html` · ${outcome(request)}`}
      ${request.slackUrl ? html` · <a class="slack-link" href=${request.slackUrl} target="_blank" rel="noopener noreferrer">Open in Slack</a>` : ""}
    </div>
    ${
      body.context
        ? html`<div class="agent-says">
            <span class="meta">The agent says:</span>
            <blockquote>${v(body.context)}</blockquote>
          </div>`
        : ""
    }
    ${
      body.toolName
        ? html`<div>Tool: <b>${v(body.toolName)}</b></div>
            <${ToolView} body=${body} />`
        : ""
    }
    ${pending && !readOnly ? html`<${Actions} request=${request} act=${act} open=${open} />` : ""}
  </article>`;
}

function outcome(request) {
  const took = request.endedAt ? Math.round((Date.parse(request.endedAt) - Date.parse(request.createdAt)) / 1000) : undefined;
  const who = request.answeredBy ? ` by ${request.answeredBy.name ?? request.answeredBy.id}${request.answeredBy.via ? "" : " in Slack"}` : "";
  return `${request.status}${who}${took === undefined ? "" : ` after ${took} s`}`;
}

/**
 * Server-sent changes, applied together at most every 50 ms: a burst (a
 * thousand creates) renders once, not once each. Every time the stream
 * (re)opens, the queue is read again, so what changed while there was no
 * stream (a network blip, a proxy's idle cut, a relay restart) still shows;
 * a request the stream spoke of since that read began keeps the stream's
 * state, and one no longer pending nor listed leaves the queue.
 */
function useLiveRequests(session) {
  const [requests, setRequests] = useState(new Map());
  useEffect(() => {
    if (!session) return undefined;
    let pending = [];
    let timer;
    let touched = new Set();
    let opens = 0;
    const reread = async () => {
      const seen = (touched = new Set());
      let listed;
      try {
        listed = await call("/requests");
      } catch {
        return;
      }
      const fresh = [...listed.pending, ...listed.ended].filter((r) => !seen.has(r.id));
      const ids = new Set(fresh.map((r) => r.id));
      setRequests((old) => {
        const next = new Map(old);
        for (const [id, r] of old) if (r.status === "pending" && !ids.has(id) && !seen.has(id)) next.delete(id);
        for (const r of fresh) next.set(r.id, r);
        return next;
      });
    };
    const flush = () => {
      timer = undefined;
      const changed = pending;
      pending = [];
      setRequests((old) => {
        const next = new Map(old);
        for (const request of changed) next.set(request.id, request);
        return next;
      });
    };
    const source = new EventSource(`${API}/events`);
    // The first open follows the page's own read of the queue (session.listed); each later one is a reconnect.
    source.addEventListener("open", () => {
      opens += 1;
      if (opens > 1) reread();
    });
    source.addEventListener("request", (event) => {
      const request = JSON.parse(event.data);
      touched.add(request.id);
      pending.push(request);
      timer ??= setTimeout(flush, 50);
      if (request.status === "pending" && !session.readOnly && globalThis.Notification?.permission === "granted" && document.hidden)
        new Notification("Approval needed", { body: v(request.body.title) ?? KIND_NAMES[request.body.kind] });
    });
    const { pending: open, ended } = session.listed;
    setRequests(new Map([...open, ...ended].map((r) => [r.id, r])));
    return () => {
      source.close();
      clearTimeout(timer);
    };
  }, [session]);
  return [requests, setRequests];
}

function AuditLog() {
  const [page, setPage] = useState(undefined);
  const [error, setError] = useState("");
  useEffect(() => {
    call("/audit?limit=200").then(setPage, (e) => setError(e.message));
  }, []);
  if (error) return html`<p class="error">${error}</p>`;
  const events = page?.events;
  // What the cap and the tokens' shares kept out, in the words the CLI uses: the list is not the whole record.
  return html`${page?.dropped ? html`<p class="warning audit-dropped" role="status">${auditDroppedText(page.dropped)}</p>` : ""}
    <table class="audit">
      <thead>
        <tr>
          <th>when</th>
          <th>event</th>
          <th>request</th>
          <th>who</th>
        </tr>
      </thead>
      <tbody>
        ${(events ?? []).map(
          (e) =>
            html`<tr>
              <td>${e.at}</td>
              <td>${e.type}</td>
              <td>${e.requestId ?? ""}</td>
              <td>${e.person ? `${e.person.name ?? e.person.id}${e.person.via ? ` (${e.person.via})` : ""}` : ""}</td>
            </tr>`,
        )}
      </tbody>
    </table>`;
}

function App() {
  const [session, setSession] = useState(undefined);
  const [signedOut, setSignedOut] = useState(undefined);
  const [requests, setRequests] = useLiveRequests(session);
  const [error, setError] = useState("");
  const [now, setNow] = useState(Date.now());
  const [filters, setFilters] = useState({ kind: "", status: "pending", text: "" });
  const [selectedId, setSelectedId] = useState(undefined);
  const [dialog, setDialog] = useState(null);
  const [view, setView] = useState("queue");

  const load = async () => {
    try {
      // Both at once: the queue shows one round trip after the page loads.
      const [found, listed] = await Promise.all([call("/session"), call("/requests")]);
      csrf = found.csrf;
      person = found.person;
      setSession({ ...found, listed, readOnly: found.role === "viewer" });
      setSignedOut(undefined);
    } catch (e) {
      setSignedOut(e.status === 401 ? "" : e.message);
    }
  };
  useEffect(() => {
    signInFromFragment(call).then(load, (e) => setSignedOut(e.message));
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);

  const shown = useMemo(
    () =>
      [...requests.values()]
        .filter((r) => (filters.status === "pending" ? r.status === "pending" : filters.status === "ended" ? r.status !== "pending" : true))
        .filter((r) => !filters.kind || r.body.kind === filters.kind)
        .filter((r) => !filters.text || JSON.stringify([r.token, r.channel, r.body.agent, r.body.labels]).includes(filters.text))
        .sort((a, b) => Date.parse(b.createdAt) - Date.parse(a.createdAt)),
    [requests, filters],
  );
  const pendingCount = useMemo(() => [...requests.values()].filter((r) => r.status === "pending").length, [requests]);
  useEffect(() => {
    document.title = pendingCount ? `(${pendingCount}) Approval relay` : "Approval relay";
  }, [pendingCount]);
  const selected = shown.find((r) => r.id === selectedId) ?? shown[0];

  const act = async (request, action, body) => {
    try {
      const result = await call(`/requests/${request.id}/${action}`, { method: "POST", body: body ?? {} });
      setRequests((old) => new Map(old).set(result.request.id, result.request));
      setError("");
    } catch (e) {
      setError(e.message);
    }
  };
  const open = (kind, request) => setDialog({ kind, request });

  useEffect(() => {
    const onKey = (event) => {
      if (dialog || session?.readOnly) return;
      if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement || event.target instanceof HTMLTextAreaElement) return;
      const index = shown.indexOf(selected);
      if (event.key === "j") setSelectedId(shown[Math.min(shown.length - 1, index + 1)]?.id);
      else if (event.key === "k") setSelectedId(shown[Math.max(0, index - 1)]?.id);
      if (!selected || selected.status !== "pending") return;
      const kind = selected.body.kind;
      if (kind === "step_gate" && ["y", "n", "q"].includes(event.key)) act(selected, "answer", { decision: { reply: event.key } });
      if (kind === "permission" && event.key === "a") act(selected, "answer", { decision: { behavior: "allow", updatedInput: selected.body.input } });
      if (kind === "permission" && event.key === "d") open("deny", selected);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [shown, selected, dialog, session]);

  if (signedOut !== undefined) return html`<${SignIn} call=${call} problem=${signedOut} signedIn=${load} />`;
  if (!session) return html`<p>Loading…</p>`;
  const signOut = async () => {
    await call("/signout", { method: "POST", body: {} }).catch(() => undefined);
    setSession(undefined);
    setSignedOut("");
  };
  return html`<header>
      <h1>Approval relay · ${pendingCount} pending</h1>
      <span class="who">${session.person.name ?? session.person.id}${session.readOnly ? " · read-only" : ""}</span>
      ${
        session.readOnly || (!session.slack && session.role === "answerer")
          ? html`<button onClick=${() => setView(view === "audit" ? "queue" : "audit")}>${view === "audit" ? "Requests" : "Audit log"}</button>`
          : ""
      }
      ${
        typeof Notification !== "undefined" && Notification.permission === "default" && !session.readOnly
          ? html`<button onClick=${() => Notification.requestPermission()}>Notify me</button>`
          : ""
      }
      <button onClick=${signOut}>Sign out</button>
    </header>
    ${
      view === "audit"
        ? html`<${AuditLog} />`
        : html`<div class="filters">
              <select aria-label="status" onChange=${(e) => setFilters({ ...filters, status: e.target.value })}>
                <option value="pending">Pending</option>
                <option value="ended">History</option>
                <option value="">All</option>
              </select>
              <select aria-label="kind" onChange=${(e) => setFilters({ ...filters, kind: e.target.value })}>
                <option value="">Every kind</option>
                ${Object.entries(KIND_NAMES).map(([k, name]) => html`<option value=${k}>${name}</option>`)}
              </select>
              <input
                aria-label="agent, label or channel"
                placeholder="agent, label, channel"
                onInput=${(e) => setFilters({ ...filters, text: e.target.value })}
              />
            </div>
            ${error ? html`<p class="error">${error}</p>` : ""}
            ${shown.map(
              (r) => html`<${Request} key=${r.id} request=${r} selected=${r === selected} now=${now} act=${act} open=${open} readOnly=${session.readOnly} />`,
            )}`
    }
    ${dialog ? html`<${Dialog} dialog=${dialog} close=${() => setDialog(null)} act=${act} denied=${deniedBy()} />` : ""}`;
}

render(html`<${App} />`, document.getElementById("app"));
