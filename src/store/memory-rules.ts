/**
 * In-memory RuleStore for a single relay instance (no REDIS_URL): same
 * contract as the Redis rule store, lost when the process exits. A rule
 * past its time is treated as gone on every read and dropped then.
 */
import { ruleLives } from "../requests/rule-matching.js";
import { Rule, scopeOf, type CreatedRule, type RuleQuery, type RuleScope, type RuleStore } from "../requests/rules.js";

export function createMemoryRuleStore(): RuleStore {
  const rules = new Map<string, Rule>();
  /** Scope key → id of the scope's live rule. */
  const scopes = new Map<string, string>();

  const keyOf = (scope: RuleScope) => JSON.stringify([scope.token, scope.sessionId, scope.toolName]);

  function drop(id: string): void {
    const rule = rules.get(id);
    if (!rule) return;
    rules.delete(id);
    const key = keyOf(rule);
    if (scopes.get(key) === id) scopes.delete(key);
  }

  /** The rule while it lives at `now` (one past its time is dropped). */
  function live(id: string | undefined, now: number): Rule | undefined {
    const rule = id === undefined ? undefined : rules.get(id);
    if (!rule) return undefined;
    if (ruleLives(rule, now)) return rule;
    drop(rule.id);
    return undefined;
  }

  const copy = (rule: Rule | undefined) => (rule === undefined ? undefined : structuredClone(rule));

  return {
    async create(rule, now): Promise<CreatedRule> {
      const stored = Rule.parse(rule);
      const key = keyOf(stored);
      const replaced = live(scopes.get(key), now);
      if (replaced) drop(replaced.id);
      rules.set(stored.id, stored);
      scopes.set(key, stored.id);
      return replaced ? { rule: copy(stored)!, replaced: copy(replaced)! } : { rule: copy(stored)! };
    },

    async find(scope, now) {
      return copy(live(scopes.get(keyOf(scopeOf(scope))), now));
    },

    async get(id, now) {
      return copy(live(id, now));
    },

    async use(id, now) {
      const rule = live(id, now);
      if (!rule) return undefined;
      rule.uses += 1;
      return copy(rule);
    },

    async list({ now, token, createdBy, limit }: RuleQuery) {
      const found = [...rules.keys()]
        .map((id) => live(id, now))
        .filter((rule): rule is Rule => rule !== undefined)
        .filter((rule) => (token === undefined || rule.token === token) && (createdBy === undefined || rule.createdBy.id === createdBy));
      return found
        .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1))
        .slice(0, Math.max(0, limit))
        .map((rule) => copy(rule)!);
    },

    async revoke(id, now) {
      const rule = live(id, now);
      if (!rule) return undefined;
      drop(id);
      return copy(rule);
    },

    async setTally(id, ts, now) {
      const rule = live(id, now);
      if (!rule) return undefined;
      rule.tallyTs ??= ts;
      return copy(rule);
    },

    async close() {},
  };
}
