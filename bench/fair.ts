/**
 * Fair posting (issue 19): one agent token floods a channel with `flood`
 * requests at once (an agent stuck in a loop), then another token asks one
 * question in the same channel with a short timeout, as a production deploy
 * would. The stand-in holds chat.postMessage to Slack's pace (one a second
 * per channel). The figure is how long the second token's question waits
 * for its message (target ≤ 3 s), and how many of the flood went before it.
 * The flood is cancelled afterwards (nothing is left pending).
 */
import { newMarker, requestBody, type BenchAgent } from "./agent.js";
import type { SlackStandIn } from "./slack-stand-in.js";

export interface FairOptions {
  /** Requests the looping token creates at once. */
  flood: number;
  /** timeoutSeconds of the other token's question. */
  timeoutSeconds: number;
}

export interface FairResult {
  flood: number;
  timeoutSeconds: number;
  /** Milliseconds from the other token's create to its message in Slack. */
  postedAfterMs: number;
  /** Flood messages in Slack when it was posted. */
  floodBefore: number;
}

type Log = (line: string) => void;

/** The target the issue sets: the other token's question is posted within this many ms. */
export const FAIR_TARGET_MS = 3000;

export async function runFair(looping: BenchAgent, other: BenchAgent, standIn: SlackStandIn, options: FairOptions, log: Log): Promise<FairResult> {
  const markers = Array.from({ length: options.flood }, () => newMarker());
  const floodIds = await Promise.all(markers.map((marker) => looping.create(requestBody("step_gate", marker, 600))));
  log(`${options.flood} requests created by one token`);
  const marker = newMarker();
  const asked = performance.now();
  const id = await other.create({ ...requestBody("permission", marker, options.timeoutSeconds), agent: { name: "deploy", sessionId: "bench-deploy" } });
  await standIn.posted(marker, options.timeoutSeconds * 1000);
  const postedAfterMs = performance.now() - asked;
  const floodBefore = markers.filter((m) => standIn.hasPosted(m)).length;
  log(`the other token's question was posted ${(postedAfterMs / 1000).toFixed(1)} s after it was asked, behind ${floodBefore} of the flood`);
  await Promise.all([other.cancel(id), ...floodIds.map((request) => looping.cancel(request))]);
  return { flood: options.flood, timeoutSeconds: options.timeoutSeconds, postedAfterMs, floodBefore };
}
