/**
 * What happens when nobody answers in time (docs/architecture.md §7, a route's
 * `onTimeout`). By default (`deny`) an expired request carries no decision
 * and every consumer denies. Under `halt` the expiry also stops the agent,
 * so it does not go on to try the next tool: a step gate carries the
 * decision {reply: "q"}, a permission request a deny with `interrupt` whose
 * message says no one answered in time. Question kinds carry none. Never an
 * allow. The decision is stored by the expiry itself (one store step), so
 * every instance, the hook reply, the client and the callback see the same.
 */
import type { Decision } from "../protocol/decisions.js";
import { haltedOnTimeoutText } from "../protocol/texts.js";
import type { RequestRecord } from "./model.js";
import type { Transition } from "./store.js";

/** The decision an expiry of `record` carries; undefined under `onTimeout: deny` and for question kinds. */
export function timeoutDecision(record: RequestRecord): Decision | undefined {
  if (record.policy?.onTimeout !== "halt") return undefined;
  switch (record.body.kind) {
    case "step_gate":
      return { reply: "q" };
    case "permission":
      return { behavior: "deny", message: haltedOnTimeoutText((record.expiresAt - record.createdAt) / 1000), interrupt: true };
    default:
      return undefined;
  }
}

/**
 * The expiry of a request at `at` (Unix ms): with the decision its route's
 * onTimeout gives it (none when the record could not be read: the store
 * step then finds nothing to expire), and `unpostedError` when it never
 * reached Slack.
 */
export function expiryOf(record: RequestRecord | undefined, at: number, unpostedError?: string): Transition {
  const decision = record && timeoutDecision(record);
  return { status: "expired", at, ...(unpostedError === undefined ? {} : { unpostedError }), ...(decision ? { decision } : {}) };
}
