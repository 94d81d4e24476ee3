/**
 * Counts every Web API call the relay makes, by method and outcome, for its
 * metrics (relay_slack_calls_total): a WebClient whose `apiCall`, the one
 * door every method goes through (chat.postMessage, chat.update,
 * chat.postEphemeral, views.open, usergroups.users.list, …), tells a recorder
 * how each call ended. The call, its result and its error pass through
 * untouched, so retry.ts classifies failures exactly as before; a call the
 * relay repeats (a retried post) counts once per attempt, as Slack sees it.
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

export class CountedWebClient extends webApi.WebClient {
  private readonly recordCall: SlackCallRecorder;

  constructor(recordCall: SlackCallRecorder, token?: string, options?: webApi.WebClientOptions) {
    super(token, options);
    this.recordCall = recordCall;
  }

  override async apiCall(method: string, options?: Record<string, unknown>): Promise<webApi.WebAPICallResult> {
    let result: webApi.WebAPICallResult;
    try {
      result = await super.apiCall(method, options);
    } catch (error) {
      this.recordCall(method, failedCallOutcome(error));
      throw error;
    }
    this.recordCall(method, "ok");
    return result;
  }
}
