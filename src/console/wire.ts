/**
 * What the console's page and its routes share on the wire: the cookie and
 * header names, the request as the page gets it (with the buttons its Slack
 * message offers, decided by the same functions as the message's), and how
 * a body is parsed (every bad field a 400 naming its path).
 */
import type { z } from "zod";
import type { SlackRef } from "../protocol/request-view.js";
import { alwaysAllowGrant, alwaysAllowScope } from "../requests/always-allow.js";
import { invalidRequest } from "../requests/errors.js";
import { toView, type RequestRecord } from "../requests/model.js";
import { quorumOf } from "../requests/policy.js";
import { takesRules } from "../requests/rule-matching.js";
import { offersEdit, showsAlwaysAllow } from "../slack/blocks/permission.js";
import { ruleButtonLabel } from "../slack/blocks/rules.js";

/** A request's Slack message → its permalink (src/slack/permalinks.ts), when known. */
export type MessageLink = (ref: SlackRef) => string | undefined;

export const SESSION_COOKIE = "relay_console";
export const CSRF_HEADER = "x-csrf-token";

/**
 * The request as the console shows it: the API's view, its body, channel,
 * token, when it ended, the link to its Slack message, and what its Slack
 * message offers (the Allow button's name, the rule button's, Always allow
 * with exactly the rules it grants, Edit…).
 */
export function consoleView(record: RequestRecord, link?: MessageLink) {
  const slackUrl = record.slack && link?.(record.slack);
  return {
    ...toView(record),
    body: record.body,
    channel: record.channel,
    token: record.tokenName,
    ...(record.endedAt === undefined ? {} : { endedAt: new Date(record.endedAt).toISOString() }),
    ...(record.cancelledBy === undefined ? {} : { cancelledBy: record.cancelledBy }),
    ...(slackUrl ? { slackUrl } : {}),
    ...(record.status === "pending" ? { offers: offersOf(record) } : {}),
  };
}

/** The buttons the request's Slack message has, as the console shows them. */
export function offersOf(record: RequestRecord) {
  const body = record.body;
  return {
    allow: quorumOf(record) > 1 ? "Approve" : "Allow",
    ...(takesRules(record) ? { rule: ruleButtonLabel(record) } : {}),
    ...(body.kind === "permission" && showsAlwaysAllow(record) ? { alwaysAllow: alwaysAllowGrant(body, alwaysAllowScope(record)).granted } : {}),
    ...(body.kind === "permission" ? { edit: offersEdit(record) } : {}),
  };
}

export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(result.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })));
  return result.data;
}
