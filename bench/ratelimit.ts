/**
 * Slack's rate limit (issue 7): the stand-in holds chat.postMessage to one
 * post a second per channel and answers 429 with Retry-After: 1 beyond it.
 * `n` requests are created at once for one channel; the figures are how long
 * until every message is posted and how many chat.postMessage calls that
 * took (refused ones included). A second burst with a deadline shorter than
 * the line (`tightTimeoutSeconds`) shows how requests that cannot be posted
 * in time end: expired with an error saying Slack was rate limiting, none
 * `failed`.
 */
import { newMarker, requestBody, type BenchAgent, type RequestView } from "./agent.js";
import { expectJson } from "./http.js";
import type { SlackStandIn } from "./slack-stand-in.js";

export interface RateLimitOptions {
  /** Requests created at once for the one channel. */
  n: number;
  /** timeoutSeconds of the second burst: shorter than n seconds, so some cannot be posted in time. */
  tightTimeoutSeconds: number;
  /** Posts the stand-in takes at once per channel (its bucket), for the report. */
  slackBurst: number;
}

export interface RateLimitResult {
  n: number;
  /** Posts the stand-in took at once per channel. */
  slackBurst: number;
  /** Milliseconds from the first create until the last message was posted. */
  allPostedMs: number;
  /** chat.postMessage calls the relay made for them, refused ones included. */
  postCalls: number;
  /** Of those, refused with 429. */
  refused: number;
  /** The second burst: posted in time, expired without being posted, failed (never, unless Slack refuses for good). */
  tight: { timeoutSeconds: number; posted: number; expired: number; failed: number; expiredErrors: string[] };
}

type Log = (line: string) => void;

export async function runRateLimit(agent: BenchAgent, standIn: SlackStandIn, options: RateLimitOptions, log: Log): Promise<RateLimitResult> {
  const { n } = options;
  const callsBefore = standIn.calls.get("chat.postMessage") ?? 0;
  const refusedBefore = standIn.refused;
  const markers = Array.from({ length: n }, () => newMarker());
  const started = performance.now();
  await Promise.all(markers.map((marker) => agent.create(requestBody("step_gate", marker, 300))));
  await Promise.all(markers.map((marker) => standIn.posted(marker, 300_000)));
  const allPostedMs = performance.now() - started;
  const postCalls = (standIn.calls.get("chat.postMessage") ?? 0) - callsBefore;
  const refused = standIn.refused - refusedBefore;
  log(`${n} requests posted in ${(allPostedMs / 1000).toFixed(1)} s with ${postCalls} chat.postMessage calls (${refused} refused)`);

  // Let the channel's bucket refill so the second burst starts like the first.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const timeoutSeconds = options.tightTimeoutSeconds;
  const ids = await Promise.all(Array.from({ length: n }, () => agent.create(requestBody("step_gate", newMarker(), timeoutSeconds))));
  const ended = await Promise.all(ids.map((id) => untilEnded(agent, id, timeoutSeconds + 30)));
  const unposted = ended.filter((view) => view.slack === undefined);
  const tight = {
    timeoutSeconds,
    posted: n - unposted.length,
    expired: unposted.filter((view) => view.status === "expired").length,
    failed: ended.filter((view) => view.status === "failed").length,
    expiredErrors: [...new Set(unposted.map((view) => `${view.status}: ${view.error ?? "(no error)"}`))],
  };
  log(`timeout ${timeoutSeconds} s: ${tight.posted} posted, ${tight.expired} expired unposted, ${tight.failed} failed`);
  return { n, slackBurst: options.slackBurst, allPostedMs, postCalls, refused, tight };
}

/** Long-polls `id` until it is no longer pending (or `withinSeconds` pass). */
async function untilEnded(agent: BenchAgent, id: string, withinSeconds: number): Promise<RequestView> {
  const deadline = performance.now() + withinSeconds * 1000;
  for (;;) {
    const view = expectJson<RequestView>(await agent.longPoll(id, 30), 200, "GET /v1/requests/:id?wait=30");
    if (view.status !== "pending" || performance.now() > deadline) return view;
  }
}
