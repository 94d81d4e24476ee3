/**
 * What a new request looks like before it is stored: its channel (the
 * body's, else the default), its deadline, and — in autonomous mode with
 * nothing left for a person — its answer. Pure; the service stores it.
 */
import type { CreateRequestBody } from "../protocol/request-body.js";
import type { Person } from "../protocol/request-view.js";
import { callbackHostAllowed, hostOf } from "./callback-hosts.js";
import { invalidRequest } from "./errors.js";
import { autonomousAnswers, questionsForPerson } from "./interactive.js";
import type { RequestPolicy, RequestRecord } from "./model.js";

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
  /** RELAY_CALLBACK_HOSTS; undefined → any host. */
  callbackHosts?: readonly string[];
  policy: RequestPolicy;
}

/** Throws a 400 (RelayError) naming the field when the request cannot be accepted as configured. */
export function newRecord(input: NewRecordInput): RequestRecord {
  const { id, tokenName, body, createdAt } = input;
  const channel = body.channel ?? input.defaultChannel;
  if (!channel) {
    throw invalidRequest([{ path: "channel", message: "no channel given and SLACK_DEFAULT_CHANNEL is not set" }]);
  }
  if (body.callbackUrl !== undefined && !callbackHostAllowed(body.callbackUrl, input.callbackHosts)) {
    const message = `host ${hostOf(body.callbackUrl) ?? "(none)"} is not allowed by RELAY_CALLBACK_HOSTS`;
    throw invalidRequest([{ path: "callbackUrl", message }]);
  }
  const timeoutSeconds = body.timeoutSeconds ?? input.defaultTimeoutSeconds;
  const record: RequestRecord = {
    id,
    status: "pending",
    tokenName,
    channel,
    body,
    createdAt,
    policy: input.policy,
    expiresAt: createdAt + timeoutSeconds * 1000,
  };
  if (body.kind === "interactive_questions" && questionsForPerson(body).length === 0) {
    return { ...record, status: "answered", decision: { answers: autonomousAnswers(body) }, answeredBy: RELAY_PERSON, endedAt: createdAt };
  }
  return record;
}
