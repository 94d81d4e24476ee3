/**
 * The relay's WebClient: every Web API call goes through its `apiCall` (the
 * one door of chat.postMessage, chat.update, chat.postEphemeral, views.open,
 * usergroups.users.list, …), which does three things on top of the SDK's.
 *
 * A message update (chat.update, what every click ends with) goes to Slack as
 * a JSON body, which Slack accepts for chat.update with the token as a Bearer
 * header (https://api.slack.com/methods/chat.update, "Content types"; the
 * SDK sends that header on every call). The SDK can only form-encode: it
 * copies the arguments to redact them for a debug line, JSON-encodes the
 * blocks, then percent-encodes that JSON (Node's querystring builds it piece
 * by piece: 18 KB of garbage for one ended message), about a tenth of what a
 * click allocated (docs/performance.md). It has no option for JSON bodies, so
 * the SDK is handed a one-field placeholder and the relay's `fetch` (the
 * SDK's documented transport option) sends the JSON text kept for that
 * placeholder instead of the placeholder's form body. Everything else stays
 * the SDK's: its queue, timeout, 429 and error handling, the result.
 *
 * Other calls: it encodes structured arguments (Block Kit blocks, a view,
 * message metadata) as JSON itself, once, before the SDK sees them. The SDK
 * would send exactly that JSON text (it form-encodes every non-scalar
 * argument with JSON.stringify), but first it copies the whole argument tree
 * to redact tokens for a debug line it builds whatever the log level. A
 * string argument is copied no deeper. `attachments` stay as given: the SDK
 * inspects them for its missing-fallback warning.
 *
 * And it counts each call by method and outcome when given a recorder (the
 * relay's metrics, relay_slack_calls_total). The result and the error pass
 * through untouched, so retry.ts classifies failures exactly as before; a
 * call the relay repeats (a retried post) counts once per attempt, as Slack
 * sees it.
 */
import { webApi } from "@slack/bolt";
import { classifySlackError } from "./retry.js";

/** `ratelimited`: Slack answered 429 (or `ratelimited`); `error`: any other failure, Slack's refusals and network errors alike. */
export type SlackCallOutcome = "ok" | "ratelimited" | "error";

/** Hears of each Web API call's end; never throws or waits. */
export type SlackCallRecorder = (method: string, outcome: SlackCallOutcome) => void;

/** The outcome of a call that threw `error`. */
export function failedCallOutcome(error: unknown): SlackCallOutcome {
  const { code } = classifySlackError(error);
  return code === "ratelimited" || code === "http_429" ? "ratelimited" : "error";
}

/** `options` with every object argument but `attachments` as the JSON text the SDK would send for it; the caller's object is not changed. */
export function encodeArguments(options: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (options === undefined || typeof options !== "object") return options;
  let encoded: Record<string, unknown> | undefined;
  for (const key of Object.keys(options)) {
    const value = options[key];
    if (typeof value !== "object" || value === null || key === "attachments" || Buffer.isBuffer(value)) continue;
    encoded ??= { ...options };
    encoded[key] = JSON.stringify(value);
  }
  return encoded ?? options;
}

/** Methods sent as JSON. chat.postMessage and chat.postEphemeral take JSON too, but the SDK reads their `text` and `attachments` for warnings, which a placeholder would not carry. */
const JSON_METHODS: ReadonlySet<string> = new Set(["chat.update"]);

/** The placeholder's one argument: the SDK form-encodes `{ [PLACEHOLDER]: n }` as `${PLACEHOLDER}=${n}`. */
const PLACEHOLDER = "relay_json_body";

/** The JSON body Slack gets for `options`: the arguments the SDK would send (it leaves out null and undefined ones), as one JSON text. */
export function jsonBody(options: Record<string, unknown>): string {
  let kept = options;
  for (const key of Object.keys(options)) {
    if (options[key] !== null) continue;
    if (kept === options) kept = { ...options };
    delete kept[key];
  }
  return JSON.stringify(kept);
}

/** `fetch` that sends the JSON kept for a placeholder body, and any other call as the SDK built it. */
function jsonSwapping(bodies: ReadonlyMap<string, string>, fetchFn: webApi.FetchFunction | undefined): webApi.FetchFunction {
  return (url, init) => {
    const send = fetchFn ?? (globalThis.fetch as unknown as webApi.FetchFunction);
    const json = typeof init?.body === "string" ? bodies.get(init.body) : undefined;
    if (json === undefined) return send(url, init);
    return send(url, { ...init, body: json, headers: { ...init!.headers, "Content-Type": "application/json; charset=utf-8" } });
  };
}

export class RelayWebClient extends webApi.WebClient {
  private readonly recordCall: SlackCallRecorder | undefined;
  /** JSON bodies of the calls in flight, by their placeholder's form body. */
  private readonly jsonBodies: Map<string, string>;
  private placeholders = 0;

  constructor(recordCall: SlackCallRecorder | undefined, token?: string, options: webApi.WebClientOptions = {}) {
    const jsonBodies = new Map<string, string>();
    super(token, { ...options, fetch: jsonSwapping(jsonBodies, options.fetch) });
    this.recordCall = recordCall;
    this.jsonBodies = jsonBodies;
  }

  override async apiCall(method: string, options?: Record<string, unknown>): Promise<webApi.WebAPICallResult> {
    let args: Record<string, unknown> | undefined;
    let placeholder: string | undefined;
    // A call given its own token is left to the SDK: it sends that token in the body too.
    if (JSON_METHODS.has(method) && options !== undefined && options.token === undefined) {
      const n = (this.placeholders = (this.placeholders + 1) % Number.MAX_SAFE_INTEGER);
      placeholder = `${PLACEHOLDER}=${n}`;
      this.jsonBodies.set(placeholder, jsonBody(options));
      args = { [PLACEHOLDER]: n };
    } else {
      // files.uploadV2 reads its file arguments as given and makes calls of its own, which come back through here.
      args = method === "files.uploadV2" ? options : encodeArguments(options);
    }
    let result: webApi.WebAPICallResult;
    try {
      result = await super.apiCall(method, args);
    } catch (error) {
      this.recordCall?.(method, failedCallOutcome(error));
      throw error;
    } finally {
      if (placeholder !== undefined) this.jsonBodies.delete(placeholder);
    }
    this.recordCall?.(method, "ok");
    return result;
  }
}
