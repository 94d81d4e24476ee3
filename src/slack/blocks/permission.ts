/**
 * A permission request: the tool call rendered for people and the Allow /
 * Allow for 15 min / Always allow / Edit… / Deny / Deny with reason… / Deny
 * & stop buttons (Approve and the Deny variants where several approvals are
 * needed).
 */
import type { KnownBlock } from "@slack/types";
import type { RequestRecord } from "../../requests/model.js";
import type { PermissionBody, PermissionUpdate } from "../../protocol/request-body.js";
import { Action, encodeButton } from "../ids.js";
import type { Leaf } from "./budget.js";
import { actions, button, confirmDialog, context, section } from "./elements.js";
import { nestsDeeperThan } from "../../protocol/json-depth.js";
import { MAX_PRETTY_DEPTH } from "./json.js";
import type { KindViewOf } from "./kind.js";
import { LIMITS } from "./limit-values.js";
import { chunkAll, cutShort } from "./text.js";
import { escapeMrkdwn } from "./escape.js";
import { visibleJson } from "../../protocol/visible-text.js";
import { alwaysAllowGrant, alwaysAllowScope, offersAlwaysAllow } from "../../requests/always-allow.js";
import { quorumOf } from "../../requests/policy.js";
import { toolBlocks, toolLeaves, toolShape, toolSummary } from "./tool-view.js";
import { ruleButtons } from "./rules.js";

function bodyOf(record: RequestRecord): PermissionBody {
  if (record.body.kind !== "permission") throw new Error(`not a permission request: ${record.body.kind}`);
  return record.body;
}

/** The input's pretty JSON when it can be edited in a plain_text_input (it fits Slack's 3000 characters), else undefined. */
export function editableJson(record: RequestRecord): string | undefined {
  if (record.body.kind !== "permission") return undefined;
  if (nestsDeeperThan(record.body.input, MAX_PRETTY_DEPTH)) return undefined;
  // Its JSON is longer than its strings, and escaping only lengthens that: a 1 MB input is neither written out nor scanned for nothing.
  if (textLongerThan(record.body.input, LIMITS.initialValue)) return undefined;
  const pretty = JSON.stringify(record.body.input, null, 2);
  if (pretty.length > LIMITS.initialValue) return undefined;
  const json = visibleJson(pretty);
  return json.length <= LIMITS.initialValue ? json : undefined;
}

/** True when the strings in `value`, object keys included, hold more than `limit` characters together (stops as soon as they do). */
function textLongerThan(value: unknown, limit: number): boolean {
  let length = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") length += item.length;
    else if (Array.isArray(item)) for (const child of item) stack.push(child);
    else if (typeof item === "object" && item !== null) {
      for (const [key, child] of Object.entries(item)) {
        length += key.length;
        stack.push(child);
      }
    }
    if (length > limit) return true;
  }
  return false;
}

/** True when the input can be edited in a plain_text_input. */
export function canEditInput(record: RequestRecord): boolean {
  return editableJson(record) !== undefined;
}

/** Longest list of granted rules the message shows itself; a longer one is shown in a confirm modal before anything is granted. */
export const ALWAYS_ALLOW_LIST_MAX = 2800;
/** Characters of rule text per section of the confirm modal, and the sections it may hold (Slack: 100 blocks, 3000 characters each). */
const MODAL_SECTION_CHARS = 2900;
const MODAL_SECTIONS = 95;

/** The rules an Always allow click passes back, each as one raw (unescaped) phrase; empty when nothing is granted. */
function grantedPhrases(record: RequestRecord): string[] {
  if (!offersAlwaysAllow(record) || record.body.kind !== "permission") return [];
  return alwaysAllowGrant(record.body, alwaysAllowScope(record)).granted.map(suggestionPhrase);
}

/** Every granted rule in one escaped line, or undefined when nothing is granted. */
function grantedRulesText(record: RequestRecord): string | undefined {
  const phrases = grantedPhrases(record);
  return phrases.length > 0 ? escapeMrkdwn(phrases.join("; ")) : undefined;
}

/** The confirm modal's rule sections, escaped: each phrase whole, split (never inside an entity) only where one is longer than a section. */
export function alwaysAllowSections(record: RequestRecord): string[] {
  return grantedPhrases(record).flatMap((phrase) => chunkAll(phrase, "text", MODAL_SECTION_CHARS).map((part, i) => (i === 0 ? `• ${part()}` : part())));
}

/**
 * True when the message offers Always allow: one approval decides (docs/architecture.md
 * §7: a quorum offers Approve / Deny only), something to grant, and every
 * granted rule can be shown in full (in the message, or else in the confirm
 * modal). Rules too long to show anywhere are not offered: fail closed.
 */
export function showsAlwaysAllow(record: RequestRecord): boolean {
  return quorumOf(record) <= 1 && offersAlwaysAllow(record) && alwaysAllowSections(record).length <= MODAL_SECTIONS;
}

/** True when the message offers Edit…: one approval decides and the input can be edited in Slack. */
export function offersEdit(record: RequestRecord): boolean {
  return quorumOf(record) <= 1 && canEditInput(record);
}

/** True when the message itself lists every rule Always allow grants (else the button opens a confirm modal). */
export function alwaysAllowListFits(record: RequestRecord): boolean {
  return (grantedRulesText(record)?.length ?? 0) <= ALWAYS_ALLOW_LIST_MAX;
}

function toolLabel(body: PermissionBody): string {
  const name = cutShort(body.toolName, 150);
  return body.displayName ? `${cutShort(body.displayName, 150)} (${name})` : name;
}

const META = [
  { key: "description", label: "Description", cap: 1000, weight: 2 },
  { key: "decisionReason", label: "Why it asks", cap: 1000, weight: 2 },
  { key: "blockedPath", label: "Blocked path", cap: 500, weight: 1 },
] as const;

export const permissionView: KindViewOf = (record) => {
  const body = bodyOf(record);
  const shape = toolShape(body.toolName, body.input, true);
  // Once per view: the message is rendered twice (measure, then build) and the input may be 1 MB.
  const editable = offersEdit(record);
  const leaves: Leaf[] = toolLeaves(shape);
  for (const meta of META) {
    const raw = body[meta.key];
    if (raw) leaves.push({ key: meta.key, raw, encoding: "text", weight: meta.weight, cap: meta.cap });
  }
  return {
    leaves,
    content(fit) {
      const lines = META.filter((meta) => body[meta.key]).map((meta) => `*${meta.label}:* ${fit.text(meta.key)}`);
      const blocks: KnownBlock[] = lines.length > 0 ? [section("meta", lines.join("\n"))] : [];
      return [...blocks, ...toolBlocks(shape, toolLabel(body), fit)];
    },
    controls: () => permissionControls(record, body, editable),
    summary: toolSummary(body.toolName, shape),
  };
};

/** Allow / Always allow / Edit… / Deny variants; under a quorum, Approve (one approval of several) and the Deny variants only. */
function permissionControls(record: RequestRecord, body: PermissionBody, editable: boolean): KnownBlock[] {
  const value = encodeButton({ r: record.id });
  const tool = cutShort(body.toolName, 100);
  const risky = body.defaultToNo
    ? (verb: string) => confirmDialog(`${verb}?`, `The agent suggests answering No to this ${tool} call. ${verb} it anyway?`, verb, "primary")
    : undefined;
  const allow = quorumOf(record) > 1 ? "Approve" : "Allow";
  const buttons = [button(allow, Action.allow, value, { style: "primary", confirm: risky?.(allow) }), ...ruleButtons(record, value, risky)];
  if (showsAlwaysAllow(record)) buttons.push(button("Always allow", Action.alwaysAllow, value, { confirm: risky?.("Always allow") }));
  if (editable) buttons.push(button("Edit…", Action.edit, value));
  buttons.push(
    button("Deny", Action.deny, value, { style: "danger" }),
    button("Deny with reason…", Action.denyWithReason, value),
    button("Deny & stop", Action.denyAndStop, value, {
      style: "danger",
      confirm: confirmDialog("Deny and stop the agent?", `The ${tool} call is denied and the agent stops its turn.`, "Deny & stop", "danger"),
    }),
  );
  const blocks: KnownBlock[] = [actions("actions", buttons)];
  const notes = alwaysAllowNotes(record, body);
  if (notes.length > 0) blocks.push(context("always_allow", notes));
  return blocks;
}

/** What Always allow saves, in full (or that the button shows it first), and what the agent suggested that it does not pass back. */
function alwaysAllowNotes(record: RequestRecord, body: PermissionBody): string[] {
  if (body.suppressAlwaysAllowRule === true || (body.suggestions?.length ?? 0) === 0 || quorumOf(record) > 1) return [];
  const { granted, withheld } = alwaysAllowGrant(body, alwaysAllowScope(record));
  const notes: string[] = [];
  const rules = grantedRulesText(record);
  if (rules !== undefined && !showsAlwaysAllow(record)) {
    notes.push(`_Always allow_ is not offered: its ${granted.length} rules are too long to show in full.`);
  } else if (rules !== undefined) {
    notes.push(
      rules.length <= ALWAYS_ALLOW_LIST_MAX
        ? `_Always allow_ also saves: ${rules}`
        : `_Always allow_ also saves ${granted.length} rules, too long to list here: the button shows every one before anything is saved.`,
    );
  }
  if (withheld.length > 0) {
    const which = withheld.length === 1 ? "1 more suggestion" : `${withheld.length} more suggestions`;
    notes.push(
      `_Not offered:_ ${which} (mode changes, directories, wildcard rules or rules for other tools); the relay passes back only rules for ${cutShort(body.toolName, 100)}.`,
    );
  }
  return notes;
}

/** A permission update as one phrase, in full (raw: escape before showing): "allow Bash(npm test:*) (session)". */
function suggestionPhrase(update: PermissionUpdate): string {
  const fields: Record<string, unknown> = update;
  const where = typeof fields.destination === "string" ? ` (${fields.destination})` : "";
  if (Array.isArray(fields.rules)) {
    const rules = fields.rules.map((rule: unknown) => {
      if (typeof rule !== "object" || rule === null) return "?";
      const { toolName, ruleContent } = rule as Record<string, unknown>;
      const name = typeof toolName === "string" ? toolName : "?";
      return typeof ruleContent === "string" ? `${name}(${ruleContent})` : name;
    });
    const behavior = typeof fields.behavior === "string" ? `${fields.behavior} ` : "";
    return `${behavior}${rules.join(", ")}${where}`;
  }
  if (typeof fields.mode === "string") return `mode ${fields.mode}${where}`;
  if (Array.isArray(fields.directories)) return `directories ${fields.directories.map(String).join(", ")}${where}`;
  return `${update.type}${where}`;
}
