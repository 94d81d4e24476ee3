/**
 * The query string of the hook URL, checked before the body is read:
 * `?timeout=S` (the hook's own `timeout`, so the relay can answer before
 * Claude Code gives up), `&channel=C…` (where to ask), `&label.<key>=<value>`
 * (the request's labels, one parameter each, for the relay's routes) and
 * `&requestedBy=U…` or an email (who the tool call is for). An unknown or
 * repeated parameter is a 400 naming it, never ignored: a misspelt `timeout`
 * would otherwise make the relay hold past the hook's real timeout.
 */
import { MAX_HOOK_TIMEOUT_SECONDS, MIN_HOOK_TIMEOUT_SECONDS } from "../../protocol/claude-code-hook.js";
import { Labels, REQUESTED_BY_FORMAT, requestedByFrom, SlackChannelId, type RequestedBy } from "../../protocol/request-body.js";
import { invalidRequest } from "../errors.js";

export interface HookQuery {
  /** Claude Code's timeout for this hook, in seconds. */
  timeoutSeconds: number;
  /** Slack channel or user id; absent → the relay's default channel. */
  channel?: string;
  /** From `label.<key>=<value>` parameters. */
  labels?: Labels;
  /** From `requestedBy=`: a Slack user id or an email. */
  requestedBy?: RequestedBy;
}

const KNOWN = ["timeout", "channel", "requestedBy"];
const LABEL_PREFIX = "label.";
const WHOLE_SECONDS = /^\d{1,6}$/;

/** `query` is the raw text after "?" ("" when none); `defaultTimeoutSeconds` applies when it names no timeout. */
export function parseHookQuery(query: string, defaultTimeoutSeconds: number): HookQuery {
  const params = new URLSearchParams(query);
  const seen = new Set<string>();
  for (const name of params.keys()) {
    if (!KNOWN.includes(name) && !name.startsWith(LABEL_PREFIX)) {
      const message = `is not a query parameter of this hook URL (use ${KNOWN.join(", ")} or ${LABEL_PREFIX}<key>)`;
      throw invalidRequest([{ path: name.slice(0, 100) || "(query)", message }]);
    }
    if (seen.has(name)) throw invalidRequest([{ path: name, message: "give it once" }]);
    seen.add(name);
  }
  const result: HookQuery = { timeoutSeconds: defaultTimeoutSeconds };
  const timeout = params.get("timeout");
  if (timeout !== null) result.timeoutSeconds = parseTimeout(timeout);
  const channel = params.get("channel");
  if (channel !== null) {
    const parsed = SlackChannelId.safeParse(channel);
    if (!parsed.success) {
      throw invalidRequest([{ path: "channel", message: "must be a Slack channel or user id such as C0123456789" }]);
    }
    result.channel = parsed.data;
  }
  const labels = parseLabels(params);
  if (labels) result.labels = labels;
  const requestedBy = params.get("requestedBy");
  if (requestedBy !== null) {
    const parsed = requestedByFrom(requestedBy);
    if (!parsed) throw invalidRequest([{ path: "requestedBy", message: REQUESTED_BY_FORMAT }]);
    result.requestedBy = parsed;
  }
  return result;
}

/** `label.env=prod&label.team=payments` → {env: "prod", team: "payments"}; a bad key or value is a 400 naming its parameter. */
function parseLabels(params: URLSearchParams): Labels | undefined {
  const entries = [...params].filter(([name]) => name.startsWith(LABEL_PREFIX));
  if (entries.length === 0) return undefined;
  const labels = Object.fromEntries(entries.map(([name, value]) => [name.slice(LABEL_PREFIX.length), value]));
  const parsed = Labels.safeParse(labels);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.length > 0 ? `${LABEL_PREFIX}${String(issue.path[0]).slice(0, 100)}` : "label";
    throw invalidRequest([{ path, message: issue.message }]);
  }
  return parsed.data;
}

function parseTimeout(raw: string): number {
  const seconds = WHOLE_SECONDS.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds >= MIN_HOOK_TIMEOUT_SECONDS && seconds <= MAX_HOOK_TIMEOUT_SECONDS)) {
    throw invalidRequest([
      {
        path: "timeout",
        message: `must be the hook's timeout, a whole number of seconds from ${MIN_HOOK_TIMEOUT_SECONDS} to ${MAX_HOOK_TIMEOUT_SECONDS}`,
      },
    ]);
  }
  return seconds;
}
