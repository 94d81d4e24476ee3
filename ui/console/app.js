/**
 * The web console's page (docs/console.md): signs in with the link's
 * fragment, then shows the live queue (server-sent events) and the history,
 * and answers through the console API with the session's CSRF token.
 * preact + htm render everything: agent-supplied strings only ever reach
 * the DOM as text nodes (never innerHTML or markdown).
 */
import { h, render } from "preact";
import { useEffect, useMemo, useState } from "preact/hooks";
import htm from "htm";
// What runs is what is shown (issue 16): invisible and direction-changing characters as ⟨U+202E⟩, as in Slack.
import { anyHidden, visibleJson, visibleText } from "../../src/protocol/visible-text.ts";

const html = htm.bind(h);
/** An agent's string as shown: hidden characters marked (answers and edits keep the raw value). */
const v = (text) => (typeof text === "string" ? visibleText(text) : text);
const API = "/console/api";
let csrf = "";

async function call(path, init = {}) {
  const reply = await fetch(`${API}${path}`, {
    method: init.method ?? "GET",
    credentials: "same-origin",
    headers: { ...(init.body === undefined ? {} : { "content-type": "application/json" }), ...(init.method === "POST" ? { "x-csrf-token": csrf } : {}) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  });
  const json = await reply.json().catch(() => ({}));
  if (!reply.ok) throw new Error(json.error?.message ?? `HTTP ${reply.status}`);
  return json;
}

/** The fragment's secret, sent once by POST; the fragment leaves the address bar at once. */
async function signInFromFragment() {
  const secret = location.hash.slice(1);
  history.replaceState(null, "", "/console");
  if (!secret) return;
  await call("/signin", { method: "POST", body: { secret } });
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
                >`,
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
            ${(q.options ?? []).map((o) => html`<option selected=${q.default === o}>${o}</option>`)}
          </select></label
        >`;
      if (q.type === "multiChoice")
        return html`<fieldset>
          <legend>${label}</legend>
          ${(q.options ?? []).map(
            (o) =>
              html`<label class="q"
                ><input
                  type="checkbox"
                  onChange=${(e) => {
                    const chosen = values[q.id] ?? [];
                    set(q.id, e.target.checked ? [...chosen, o] : chosen.filter((x) => x !== o));
                  }}
                />
                ${v(o)}</label
              >`,
          )}
        </fieldset>`;
      return html`<label class="q">${label} <input type="text" placeholder=${q.default ?? ""} onInput=${(e) => set(q.id, e.target.value)} /></label>`;
    })}<button class="primary" onClick=${submit}>Submit</button>`;
}

function Actions({ request, act }) {
  const body = request.body;
  const answer = (decision) => act(request, "answer", { decision });
  if (body.kind === "step_gate")
    return html`<div class="actions">
      <button class="primary" onClick=${() => answer({ reply: "y" })}>Yes</button>
      <button onClick=${() => answer({ reply: "n" })}>No</button>
      <button class="danger" onClick=${() => answer({ reply: "q" })}>Stop</button>
      <button onClick=${() => act(request, "more-time")}>+30 min</button>
    </div>`;
  if (body.kind === "permission")
    return html`<div class="actions">
      <button class="primary" onClick=${() => answer({ behavior: "allow", updatedInput: body.input })}>Allow</button>
      ${
        body.suggestions?.length && !body.suppressAlwaysAllowRule
          ? html`<button onClick=${() => answer({ behavior: "allow", updatedInput: body.input, updatedPermissions: body.suggestions })}>Always allow</button>`
          : ""
      }
      <button onClick=${() => act(request, "allow-for-a-while")}>Allow for 15 min</button>
      <button
        onClick=${() => {
          const text = prompt("Edited input (JSON object)", JSON.stringify(body.input, null, 2));
          if (text === null) return;
          let updatedInput;
          try {
            updatedInput = JSON.parse(text);
          } catch {
            alert("That is not JSON.");
            return;
          }
          if (typeof updatedInput !== "object" || updatedInput === null || Array.isArray(updatedInput)) return alert("The input must be a JSON object.");
          answer({ behavior: "allow", updatedInput });
        }}
      >
        Edit…
      </button>
      <button class="danger" onClick=${() => denyWithReason(request, act)}>Deny</button>
      <button onClick=${() => act(request, "more-time")}>+30 min</button>
    </div>`;
  return html`<div class="actions"><${Questions} request=${request} answer=${answer} /></div>`;
}

function denyWithReason(request, act) {
  const reason = prompt("Reason (optional)") ?? undefined;
  act(request, "answer", { decision: { behavior: "deny", message: reason?.trim() || "Denied by the local console." } });
}

function Request({ request, selected, now, act }) {
  const body = request.body;
  const pending = request.status === "pending";
  return html`<article class=${`request ${selected ? "selected" : ""} ${pending ? "" : "ended"}`} data-id=${request.id}>
    <h2>${KIND_NAMES[body.kind]}${body.title ? html`: ${v(body.title)}` : ""}</h2>
    ${anyHidden(body) ? html`<p class="warning">⚠️ Hidden or direction-changing characters are shown as ⟨U+…⟩ where they are.</p>` : ""}
    <div class="meta">
      ${v(body.agent?.name) ?? request.token} · ${request.channel} ${Object.entries(body.labels ?? {}).map(([key, value]) => html` · ${key}=${value}`)}
      ${pending ? html` · <span class="countdown">${left(request.expiresAt, now)}</span> left` : html` · ${outcome(request)}`}
    </div>
    ${body.context ? html`<p>${v(body.context)}</p>` : ""}
    ${
      body.toolName
        ? html`<div>Tool: <b>${v(body.toolName)}</b></div>
            <${ToolView} body=${body} />`
        : ""
    }
    ${pending ? html`<${Actions} request=${request} act=${act} />` : ""}
  </article>`;
}

function outcome(request) {
  const took = request.endedAt ? Math.round((Date.parse(request.endedAt) - Date.parse(request.createdAt)) / 1000) : undefined;
  const who = request.answeredBy ? ` by ${request.answeredBy.name ?? request.answeredBy.id}${request.answeredBy.via ? "" : " in Slack"}` : "";
  return `${request.status}${who}${took === undefined ? "" : ` after ${took} s`}`;
}

function App() {
  const [requests, setRequests] = useState(new Map());
  const [error, setError] = useState("");
  const [now, setNow] = useState(Date.now());
  const [filters, setFilters] = useState({ kind: "", status: "pending", text: "" });
  const [selectedId, setSelectedId] = useState(undefined);
  const [ready, setReady] = useState(false);

  useEffect(() => {
    let source;
    (async () => {
      try {
        await signInFromFragment();
        csrf = (await call("/session")).csrf;
        const { pending, ended } = await call("/requests");
        setRequests(new Map([...pending, ...ended].map((r) => [r.id, r])));
        source = new EventSource(`${API}/events`);
        source.addEventListener("request", (event) => {
          const request = JSON.parse(event.data);
          setRequests((old) => new Map(old).set(request.id, request));
          if (request.status === "pending" && Notification?.permission === "granted" && document.hidden)
            new Notification("Approval needed", { body: request.body.title ?? KIND_NAMES[request.body.kind] });
        });
        setReady(true);
      } catch (e) {
        setError(e.message);
      }
    })();
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => {
      clearInterval(timer);
      source?.close();
    };
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
  const pendingCount = [...requests.values()].filter((r) => r.status === "pending").length;
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

  useEffect(() => {
    const onKey = (event) => {
      if (event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement) return;
      const index = shown.indexOf(selected);
      if (event.key === "j") setSelectedId(shown[Math.min(shown.length - 1, index + 1)]?.id);
      else if (event.key === "k") setSelectedId(shown[Math.max(0, index - 1)]?.id);
      if (!selected || selected.status !== "pending") return;
      const kind = selected.body.kind;
      if (kind === "step_gate" && ["y", "n", "q"].includes(event.key)) act(selected, "answer", { decision: { reply: event.key } });
      if (kind === "permission" && event.key === "a") act(selected, "answer", { decision: { behavior: "allow", updatedInput: selected.body.input } });
      if (kind === "permission" && event.key === "d") denyWithReason(selected, act);
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [shown, selected]);

  if (error && !ready) return html`<p class="error">${error}</p>`;
  return html`<header>
      <h1>Approval relay · ${pendingCount} pending</h1>
      ${
        typeof Notification !== "undefined" && Notification.permission === "default"
          ? html`<button onClick=${() => Notification.requestPermission()}>Notify me</button>`
          : ""
      }
    </header>
    <div class="filters">
      <select aria-label="status" onChange=${(e) => setFilters({ ...filters, status: e.target.value })}>
        <option value="pending">Pending</option>
        <option value="ended">History</option>
        <option value="">All</option>
      </select>
      <select aria-label="kind" onChange=${(e) => setFilters({ ...filters, kind: e.target.value })}>
        <option value="">Every kind</option>
        ${Object.entries(KIND_NAMES).map(([k, name]) => html`<option value=${k}>${name}</option>`)}
      </select>
      <input aria-label="agent, label or channel" placeholder="agent, label, channel" onInput=${(e) => setFilters({ ...filters, text: e.target.value })} />
    </div>
    ${error ? html`<p class="error">${error}</p>` : ""}
    ${shown.map((r) => html`<${Request} key=${r.id} request=${r} selected=${r === selected} now=${now} act=${act} />`)}`;
}

render(html`<${App} />`, document.getElementById("app"));
