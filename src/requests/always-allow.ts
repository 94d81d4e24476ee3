/**
 * What "Always allow" grants (issue #5 item 7: nothing is granted that was
 * not shown). An agent's permission suggestions are rule updates Claude Code
 * would save: by default the relay passes back only plain allow rules for the
 * tool being asked about; mode changes (setMode), directories, rule
 * replacements or removals, wildcard rules and rules for other tools pass
 * only where the request's policy says `alwaysAllow: all`. The message and
 * the button both read this one function, so what is granted is what is
 * shown.
 */
import type { PermissionBody, PermissionUpdate } from "../protocol/request-body.js";
import type { AlwaysAllowScope } from "./vocabulary.js";
import type { RequestRecord } from "./model.js";

export interface AlwaysAllowGrant {
  /** Passed back to the agent when the person clicks Always allow. */
  granted: PermissionUpdate[];
  /** Suggested by the agent, not passed back under this scope. */
  withheld: PermissionUpdate[];
}

/** The scope a record was created under; records stored before policies existed get the default. */
export function alwaysAllowScope(record: RequestRecord): AlwaysAllowScope {
  return record.policy?.alwaysAllow ?? "tool";
}

export function alwaysAllowGrant(body: PermissionBody, scope: AlwaysAllowScope): AlwaysAllowGrant {
  const suggestions = body.suggestions ?? [];
  if (scope === "all") return { granted: [...suggestions], withheld: [] };
  const granted: PermissionUpdate[] = [];
  const withheld: PermissionUpdate[] = [];
  for (const update of suggestions) (isPlainToolRule(update, body.toolName) ? granted : withheld).push(update);
  return { granted, withheld };
}

/** True when the message offers Always allow: something to grant, and the agent did not suppress it. */
export function offersAlwaysAllow(record: RequestRecord): boolean {
  if (record.body.kind !== "permission" || record.body.suppressAlwaysAllowRule === true) return false;
  return alwaysAllowGrant(record.body, alwaysAllowScope(record)).granted.length > 0;
}

/** An addRules update that allows only specific uses of `toolName`. */
function isPlainToolRule(update: PermissionUpdate, toolName: string): boolean {
  const fields: Record<string, unknown> = update;
  if (update.type !== "addRules" || fields.behavior !== "allow" || !Array.isArray(fields.rules) || fields.rules.length === 0) return false;
  return fields.rules.every((rule: unknown) => {
    if (typeof rule !== "object" || rule === null) return false;
    const { toolName: name, ruleContent } = rule as Record<string, unknown>;
    return name === toolName && typeof ruleContent === "string" && !isWildcard(ruleContent);
  });
}

/** "", "*", ":*", "**", "/**", "~/**" … : content that names no specific use allows every use. */
export function isWildcard(ruleContent: string): boolean {
  return /^[\s*:/.~]*$/.test(ruleContent);
}
