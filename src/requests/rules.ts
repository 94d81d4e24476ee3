/**
 * "Allow for a while" rules (docs/architecture.md §7): what a person's click on **Allow
 * for 15 min** leaves behind, and the RuleStore contract that keeps them,
 * owned here and implemented by the memory and Redis rule stores
 * (src/store/memory-rules.ts, redis-rules.ts), shared by every instance on
 * the same store.
 *
 * A rule is scoped to one agent token, one agent session and one tool name:
 * while it lives, a new permission or step_gate request in exactly that
 * scope is answered at once in its creator's name (./rule-book.ts says
 * when). One scope holds at most one live rule: a newer rule replaces the
 * older. Times are Unix milliseconds, passed in by the caller, so that
 * every instance and both stores judge "still alive" by the same clock.
 */
import { z } from "zod";
import type { RuleView } from "../protocol/operator.js";
import { Person, SlackRef } from "../protocol/request-view.js";

/** What a rule covers: requests of this agent token, agent session and tool. */
export const RuleScope = z.object({
  /** Name of the agent token (RequestRecord.tokenName). */
  token: z.string().min(1),
  /** The request body's `agent.sessionId` (the Claude Code hook's `session_id`). */
  sessionId: z.string().min(1),
  /** The request body's `toolName`, exactly. */
  toolName: z.string().min(1),
});
export type RuleScope = z.infer<typeof RuleScope>;

/** The person who created a rule, with their workspace so the check of who may answer applies to them as to a click. */
export const RuleCreator = Person.extend({
  /** Team id of the person's own workspace, when Slack's payload gave it. */
  teamId: z.string().optional(),
});
export type RuleCreator = z.infer<typeof RuleCreator>;

export const Rule = RuleScope.extend({
  id: z.string().min(1).max(100),
  createdBy: RuleCreator,
  /** Unix time in milliseconds. */
  createdAt: z.number().int(),
  /** Unix time in milliseconds from which the rule no longer applies. */
  expiresAt: z.number().int(),
  /** Requests the rule answered so far. */
  uses: z.number().int().min(0),
  /** The request whose click created the rule. */
  requestId: z.string().min(1),
  /** That request's Slack message: its thread counts the rule's uses. */
  message: SlackRef.optional(),
  /** The thread reply that counts the uses, once posted. */
  tallyTs: z.string().optional(),
});
export type Rule = z.infer<typeof Rule>;

/** The scope of a rule, as its fields give it. */
export function scopeOf(rule: RuleScope): RuleScope {
  return { token: rule.token, sessionId: rule.sessionId, toolName: rule.toolName };
}

/** The rule as the HTTP API shows it (src/protocol/operator.ts): the creator's id and name only. */
export function toRuleView(rule: Rule): RuleView {
  const { id, name } = rule.createdBy;
  return {
    id: rule.id,
    token: rule.token,
    sessionId: rule.sessionId,
    toolName: rule.toolName,
    createdBy: name === undefined ? { id } : { id, name },
    createdAt: new Date(rule.createdAt).toISOString(),
    expiresAt: new Date(rule.expiresAt).toISOString(),
    uses: rule.uses,
    requestId: rule.requestId,
  };
}

export interface RuleQuery {
  /** Unix ms: only rules alive then are listed. */
  now: number;
  /** Only rules of this agent token. */
  token?: string;
  /** Only rules this Slack user created. */
  createdBy?: string;
  /** Most rules returned. */
  limit: number;
}

export interface CreatedRule {
  rule: Rule;
  /** The rule that was live in the same scope until now, removed by this create. */
  replaced?: Rule;
}

/**
 * Storage of rules. Every method is one atomic step; like the RequestStore,
 * a store backed by a service that can be down answers or throws
 * StoreUnavailableError within its bound.
 */
export interface RuleStore {
  /**
   * Stores `rule` (as given, uses 0) until its `expiresAt`, and makes it the
   * live rule of its scope; one live there before is removed in the same
   * step and returned as `replaced`.
   */
  create(rule: Rule, now: number): Promise<CreatedRule>;
  /** The rule live in `scope` at `now`, or undefined. */
  find(scope: RuleScope, now: number): Promise<Rule | undefined>;
  /** The rule while it lives at `now`; undefined when unknown, revoked or past its time. */
  get(id: string, now: number): Promise<Rule | undefined>;
  /** Counts one use of a live rule; returns it with the new count, or undefined when it no longer lives. */
  use(id: string, now: number): Promise<Rule | undefined>;
  /** Rules alive at `query.now`, newest first (by createdAt), at most `query.limit`. */
  list(query: RuleQuery): Promise<Rule[]>;
  /** Removes the rule (and its scope, while that still names it); returns it as it was, or undefined when it no longer lived. */
  revoke(id: string, now: number): Promise<Rule | undefined>;
  /**
   * Records the ts of the rule's tally (the thread reply counting its uses)
   * unless one is recorded already (the first wins); returns the rule as it
   * now is, or undefined when it no longer lives. Who posts the tally is
   * settled by the `tallies` queue's lease (./rule-tally.ts), not here.
   */
  setTally(id: string, ts: string, now: number): Promise<Rule | undefined>;
  close(): Promise<void>;
}

/** Who removed a rule before its time: a person (App Home), a token (`DELETE /v1/rules/:id`), or a newer rule in its scope. */
export type RuleRevoker = { person: Person } | { token: string } | { replacedBy: Rule };
