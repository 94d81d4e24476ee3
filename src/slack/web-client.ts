/**
 * The relay's WebClient: every Web API call goes through its `apiCall` (the
 * one door of chat.postMessage, chat.update, chat.postEphemeral, views.open,
 * usergroups.users.list, …), which does two things on top of the SDK's.
 *
 * It encodes structured arguments (Block Kit blocks, a view, message
 * metadata) as JSON itself, once, before the SDK sees them. The SDK would send
 * exactly that JSON text (it form-encodes every non-scalar argument with
 * JSON.stringify), but first it copies the whole argument tree to redact
 * tokens for a debug line it builds whatever the log level: about a quarter
 * of what a click allocated, the message's blocks copied key by key
 * (docs/performance.md). A string argument is copied no deeper. `attachments`
 * stay as given: the SDK inspects them for its missing-fallback warning.
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

export class RelayWebClient extends webApi.WebClient {
  private readonly recordCall: SlackCallRecorder | undefined;

  constructor(recordCall: SlackCallRecorder | undefined, token?: string, options?: webApi.WebClientOptions) {
    super(token, options);
    this.recordCall = recordCall;
  }

  override async apiCall(method: string, options?: Record<string, unknown>): Promise<webApi.WebAPICallResult> {
    // files.uploadV2 reads its file arguments as given and makes calls of its own, which come back through here.
    const args = method === "files.uploadV2" ? options : encodeArguments(options);
    let result: webApi.WebAPICallResult;
    try {
      result = await super.apiCall(method, args);
    } catch (error) {
      this.recordCall?.(method, failedCallOutcome(error));
      throw error;
    }
    this.recordCall?.(method, "ok");
    return result;
  }
}
