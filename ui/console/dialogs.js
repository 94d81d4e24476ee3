/**
 * The console's dialogs, in place of prompt() and confirm(): Deny with
 * reason…, Edit… and Deny & stop, as the Slack message's modals and
 * confirmations have them. Enter submits and Esc cancels (Shift+Enter is a
 * new line in the input editor); while one is open the page's own keys
 * (j / k / a / d …) are off. Agent text in them is text, as everywhere.
 */
import { h } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";
// As Slack's Edit modal: hidden characters in the input as \u escapes (the same JSON value), in the tool's name as ⟨U+…⟩.
import { visibleJson, visibleText } from "../../src/protocol/visible-text.ts";

const html = htm.bind(h);

/** The dialog shown over the page: `{ kind: "deny" | "edit" | "stop", request }`, or null. */
export function Dialog({ dialog, close, act, denied }) {
  const [text, setText] = useState(dialog.kind === "edit" ? visibleJson(JSON.stringify(dialog.request.body.input, null, 2)) : "");
  const [stop, setStop] = useState(false);
  const [problem, setProblem] = useState("");
  const field = useRef(null);
  useEffect(() => field.current?.focus(), []);
  const { request } = dialog;

  const submit = () => {
    if (dialog.kind === "stop") return close(act(request, "answer", { decision: { behavior: "deny", message: denied, interrupt: true } }));
    if (dialog.kind === "deny") {
      const message = text.trim() || denied;
      return close(act(request, "answer", { decision: { behavior: "deny", message, ...(stop ? { interrupt: true } : {}) } }));
    }
    let updatedInput;
    try {
      updatedInput = JSON.parse(text);
    } catch (e) {
      return setProblem(`That is not JSON: ${e.message}`);
    }
    if (typeof updatedInput !== "object" || updatedInput === null || Array.isArray(updatedInput)) return setProblem("The input must be a JSON object.");
    return close(act(request, "answer", { decision: { behavior: "allow", updatedInput } }));
  };
  const onKeyDown = (event) => {
    event.stopPropagation();
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      submit();
    }
  };
  const titles = { deny: "Deny with reason", edit: "Edit the input, then allow", stop: "Deny and stop the agent?" };
  const verbs = { deny: "Deny", edit: "Allow", stop: "Deny & stop" };
  return html`<div class="backdrop" onClick=${(e) => e.target === e.currentTarget && close()}>
    <form
      class="dialog"
      role="dialog"
      aria-modal="true"
      aria-label=${titles[dialog.kind]}
      onKeyDown=${onKeyDown}
      onSubmit=${(e) => {
        e.preventDefault();
        submit();
      }}
    >
      <h2>${titles[dialog.kind]}</h2>
      ${
        dialog.kind === "stop"
          ? html`<p>The ${visibleText(request.body.toolName ?? "")} call is denied and the agent stops its turn.</p>
              <button type="button" ref=${field} class="danger" onClick=${submit}>${verbs.stop}</button>`
          : ""
      }
      ${
        dialog.kind === "deny"
          ? html`<label>Reason (optional) <input ref=${field} aria-label="reason" value=${text} onInput=${(e) => setText(e.target.value)} /></label>
              <label class="q"
                ><input type="checkbox" aria-label="also stop the agent" checked=${stop} onChange=${(e) => setStop(e.target.checked)} /> Also stop the
                agent</label
              >`
          : ""
      }
      ${
        dialog.kind === "edit"
          ? html`<textarea ref=${field} aria-label="input" rows="12" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
              <p class="meta">Enter allows with this input; Shift+Enter is a new line.</p>`
          : ""
      }
      ${problem ? html`<p class="error">${problem}</p>` : ""}
      <div class="actions">
        ${dialog.kind === "stop" ? "" : html`<button type="submit" class=${dialog.kind === "deny" ? "danger" : "primary"}>${verbs[dialog.kind]}</button>`}
        <button type="button" onClick=${() => close()}>Cancel</button>
      </div>
    </form>
  </div>`;
}
