/**
 * "Allow for a while" (docs/architecture.md §7): the rules people create with **Allow for
 * 15 min**, how a new request is matched against them, and their listing and
 * revocation (HTTP `GET/DELETE /v1/rules`, App Home). The service creates
 * one over the RuleStore and calls it at create and on a rule click.
 *
 * A click creates a rule in two ordered steps, not one atomic store step
 * (the rule and the request live in different stores): the click's answer
 * first, through the same path as any answer (who may answer is checked,
 * the first answer wins), then the rule, only when that answer applied. A
 * click that lost to another answer, or was refused, creates nothing; a
 * crash or an outage between the steps leaves the request answered and no
 * rule, the safe side (later calls ask again, and the person is told).
 *
 * A new permission or step_gate request is answered by the rule live in its
 * scope (token, session, tool) when its own policy takes rules (no
 * `allowRules: false`, no quorum) and the rule's creator may answer it as
 * a click of theirs would be checked: a rule never widens who decides. Then
 * nothing is posted; the use is counted, audited and shown in the thread
 * after the agent has its answer. A rule store or directory that cannot
 * answer in time means no rule: the request is posted and a person asked.
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../logger.js";
import type { AnswerResult } from "./answering.js";
import { ruleCreatedEntry, ruleRevokedEntry, ruleUsedEntry, type AuditRecorder } from "./audit-entries.js";
import type { PeopleDirectory } from "./directory.js";
import type { RequestRecord } from "./model.js";
import { refusalFor, type Answerer } from "./policy.js";
import { answeredByRule, ruleMinutesOf, ruleScopeOf, takesRules } from "./rule-matching.js";
import type { RuleTallies } from "./rule-tally.js";
import type { Rule, RuleCreator, RuleQuery, RuleRevoker, RuleStore } from "./rules.js";

export interface RuleBookDeps {
  store: RuleStore;
  directory: PeopleDirectory;
  audit: AuditRecorder;
  /** The `tallies` queue's handler, which shows a rule's uses in its thread; absent: no tally (no Slack). */
  tallies?: Pick<RuleTallies, "show">;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
  newId?: () => string;
}

/** A new request a rule answers: the rule, and the record as it answers it (ended, to be stored as such). */
export interface RuleMatch {
  rule: Rule;
  record: RequestRecord;
}

/** What a click on "Allow for a while" did. */
export interface RuleGrant {
  answer: AnswerResult;
  /** Only when the click's answer applied: the rule once stored, or undefined when it could not be (logged). */
  rule?: Promise<Rule | undefined>;
}

/** Whose rules a revoke may remove; absent fields do not narrow. */
export interface RevokeScope {
  /** Only a rule of this agent token (an agent token revokes its own). */
  token?: string;
  /** Only a rule this Slack user created (App Home). */
  createdBy?: string;
}

export class RuleBook {
  private readonly newId: () => string;
  /** Uses being counted (then shown in the tally); idle() waits for them. */
  private readonly counting = new Set<Promise<void>>();

  constructor(private readonly deps: RuleBookDeps) {
    this.newId = deps.newId ?? randomUUID;
  }

  /** The rule that answers `record` (new, pending, not stored yet) at once, or undefined: then people are asked. Never throws. */
  async match(record: RequestRecord): Promise<RuleMatch | undefined> {
    const { store, directory, logger, now } = this.deps;
    const scope = ruleScopeOf(record);
    if (!scope || !takesRules(record)) return undefined;
    try {
      const at = now();
      const rule = await store.find(scope, at);
      if (!rule) return undefined;
      const refusal = await refusalFor(record, rule.createdBy, at, directory);
      if (refusal) {
        logger.info({ id: record.id, rule: rule.id, reason: refusal.reason }, "a rule's creator may not answer this request: asking people");
        return undefined;
      }
      return { rule, record: answeredByRule(record, rule, record.createdAt) };
    } catch (error) {
      logger.warn({ id: record.id, error }, "rules could not be checked: asking people");
      return undefined;
    }
  }

  /** After the request `match` answered was stored: counts the use, audits it and updates the thread's tally; off the agent's path, never throws. */
  used(match: RuleMatch, stored: RequestRecord): void {
    const { store, audit, logger, now } = this.deps;
    const counted = store
      .use(match.rule.id, now())
      .then((counted) => {
        audit.record(ruleUsedEntry(stored, counted ?? match.rule));
        logger.info({ id: stored.id, rule: match.rule.id, uses: counted?.uses }, "request answered by a rule");
        if (counted?.message) return this.deps.tallies?.show(counted.id);
      })
      .catch((error: unknown) => {
        audit.record(ruleUsedEntry(stored, match.rule));
        logger.warn({ id: stored.id, rule: match.rule.id, error }, "a rule's use was not counted");
      })
      .finally(() => this.counting.delete(counted));
    this.counting.add(counted);
  }

  /** Creates the rule a click asked for; `record` is the request that click's answer just ended. Resolves undefined (logged) when the store could not keep it. */
  async create(record: RequestRecord, person: Answerer): Promise<Rule | undefined> {
    const { store, audit, logger, now } = this.deps;
    const scope = ruleScopeOf(record);
    if (!scope) return undefined;
    const at = now();
    const rule: Rule = {
      ...scope,
      id: this.newId(),
      createdBy: creatorOf(person),
      createdAt: at,
      expiresAt: at + ruleMinutesOf(record) * 60_000,
      uses: 0,
      requestId: record.id,
      ...(record.slack ? { message: record.slack } : {}),
    };
    try {
      const { replaced } = await store.create(rule, at);
      audit.record(ruleCreatedEntry(record, rule));
      if (replaced) audit.record(ruleRevokedEntry(replaced, { replacedBy: rule }, at));
      logger.info({ id: record.id, rule: rule.id, tool: rule.toolName, until: new Date(rule.expiresAt).toISOString() }, "rule created");
      return rule;
    } catch (error) {
      logger.warn({ id: record.id, error }, "a rule could not be saved; the request was answered");
      return undefined;
    }
  }

  /** Rules alive now, newest first. */
  list(query: Omit<RuleQuery, "now">): Promise<Rule[]> {
    return this.deps.store.list({ ...query, now: this.deps.now() });
  }

  /** Revokes a live rule within `only`; undefined when it is unknown, past its time or outside `only` (alike, so nothing leaks). */
  async revoke(id: string, by: RuleRevoker, only: RevokeScope = {}): Promise<Rule | undefined> {
    const { store, audit, logger, now } = this.deps;
    const rule = await store.get(id, now());
    if (!rule || (only.token !== undefined && rule.token !== only.token) || (only.createdBy !== undefined && rule.createdBy.id !== only.createdBy)) {
      return undefined;
    }
    const at = now();
    const revoked = await store.revoke(id, at);
    if (!revoked) return undefined;
    audit.record(ruleRevokedEntry(revoked, by, at));
    logger.info({ rule: id }, "rule revoked");
    return revoked;
  }

  /** Resolves once every use counted (and its tally shown) so far has settled. */
  async idle(): Promise<void> {
    while (this.counting.size > 0) await Promise.all([...this.counting]);
  }
}

/** Only the person's id, name and workspace are kept. */
function creatorOf(person: Answerer): RuleCreator {
  return { id: person.id, ...(person.name === undefined ? {} : { name: person.name }), ...(person.teamId === undefined ? {} : { teamId: person.teamId }) };
}
