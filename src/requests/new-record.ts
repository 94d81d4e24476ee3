/**
 * What a new request looks like before it is stored, given the approver
 * route it falls under (./routes.ts) and the policy made for it
 * (./create-policy.ts): its channel (the body's, else the route's, else the
 * default; the route may bind it), its deadline, its policy without the
 * reminders and escalations that deadline leaves no time for, and — in
 * autonomous mode with nothing left for a person — its answer. Pure; the
 * service stores it.
 */
import type { CreateRequestBody } from "../protocol/request-body.js";
import type { Person } from "../protocol/request-view.js";
import { callbackHostAllowed, hostOf } from "./callback-hosts.js";
import { invalidRequest } from "./errors.js";
import { autonomousAnswers, questionsForPerson } from "./interactive.js";
import type { RequestPolicy, RequestRecord } from "./model.js";
import { chooseChannel, type MatchedRoute } from "./routes.js";

/** The person the relay names when it answers by itself (autonomous mode). */
export const RELAY_PERSON: Person = { id: "relay", name: "autonomous mode" };

export interface NewRecordInput {
  id: string;
  tokenName: string;
  body: CreateRequestBody;
  /** Unix time in milliseconds. */
  createdAt: number;
  defaultTimeoutSeconds: number;
  defaultChannel?: string;
  /** The default route's `channels`; undefined → a request no route matches may name any channel. */
  defaultChannels?: readonly string[];
  /** RELAY_CALLBACK_HOSTS; undefined → any host. */
  callbackHosts?: readonly string[];
  /** The route the request falls under (matchRoute). */
  matched: MatchedRoute;
  /** The request's policy (createPolicy). */
  policy: RequestPolicy;
}

/** Throws a 400 (RelayError) naming the field when the request cannot be accepted as configured. */
export function newRecord(input: NewRecordInput): RequestRecord {
  const { id, tokenName, body, createdAt, matched } = input;
  const channel = chooseChannel({
    matched,
    ...(body.channel === undefined ? {} : { requested: body.channel }),
    ...(input.defaultChannel === undefined ? {} : { defaultChannel: input.defaultChannel }),
    ...(input.defaultChannels === undefined ? {} : { defaultChannels: input.defaultChannels }),
  });
  if (body.callbackUrl !== undefined && !callbackHostAllowed(body.callbackUrl, input.callbackHosts)) {
    const message = `host ${hostOf(body.callbackUrl) ?? "(none)"} is not allowed by RELAY_CALLBACK_HOSTS`;
    throw invalidRequest([{ path: "callbackUrl", message }]);
  }
  const timeoutSeconds = body.timeoutSeconds ?? matched.route?.timeoutSeconds ?? input.defaultTimeoutSeconds;
  const policy = withinDeadline(input.policy, timeoutSeconds);
  const record: RequestRecord = {
    id,
    status: "pending",
    tokenName,
    channel,
    body,
    createdAt,
    policy,
    expiresAt: createdAt + timeoutSeconds * 1000,
  };
  if (body.kind === "interactive_questions" && questionsForPerson(body).length === 0) {
    return { ...record, status: "answered", decision: { answers: autonomousAnswers(body) }, answeredBy: RELAY_PERSON, endedAt: createdAt };
  }
  return record;
}

/** The policy without reminders and escalations due at or after the deadline (counted from posting, which comes after create): they could never be sent. */
function withinDeadline(policy: RequestPolicy, timeoutSeconds: number): RequestPolicy {
  const { reminders, escalate, ...rest } = policy;
  const dueReminders = reminders?.filter((after) => after < timeoutSeconds) ?? [];
  const dueEscalations = escalate?.filter((escalation) => escalation.after < timeoutSeconds) ?? [];
  return { ...rest, ...(dueReminders.length ? { reminders: dueReminders } : {}), ...(dueEscalations.length ? { escalate: dueEscalations } : {}) };
}
