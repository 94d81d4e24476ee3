/**
 * The console's ways in, shown to a browser with no session: the printed
 * link (local mode: its secret is in the fragment, sent once by POST and
 * taken off the address bar at once), Sign in with Slack (a plain link: the
 * relay redirects to Slack and back), and an admin token for a read-only
 * view (sent in a POST body, never a URL).
 */
import { h } from "preact";
import { useEffect, useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);

/** The fragment's secret, sent once by POST; the fragment leaves the address bar at once. */
export async function signInFromFragment(call) {
  const secret = location.hash.slice(1);
  history.replaceState(null, "", "/console");
  if (!secret) return;
  await call("/signin", { method: "POST", body: { secret } });
}

export function SignIn({ call, problem, signedIn }) {
  const [ways, setWays] = useState(undefined);
  const [token, setToken] = useState("");
  const [error, setError] = useState("");
  useEffect(() => {
    call("/signin").then(setWays, (e) => setError(e.message));
  }, []);
  const admin = async (event) => {
    event.preventDefault();
    try {
      await call("/signin/admin", { method: "POST", body: { token } });
      signedIn();
    } catch (e) {
      setError(e.message);
    }
  };
  return html`<section class="signin">
    <h1>Approval relay</h1>
    ${problem ? html`<p class="error">${problem}</p>` : ""} ${error ? html`<p class="error">${error}</p>` : ""}
    ${ways?.slack ? html`<p><a class="button primary" href="/console/signin/slack">Sign in with Slack</a></p>` : ""}
    ${ways?.link ? html`<p>Open the sign-in link the relay printed when it started (restart it for a new one).</p>` : ""}
    ${
      ways?.admin
        ? html`<form onSubmit=${admin}>
            <label
              >Admin token (read-only view) <input type="password" aria-label="admin token" value=${token} onInput=${(e) => setToken(e.target.value)}
            /></label>
            <button type="submit">Open read-only view</button>
          </form>`
        : ""
    }
  </section>`;
}
