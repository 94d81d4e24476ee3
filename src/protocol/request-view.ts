/**
 * What the relay answers about a request (docs/architecture.md §3): the view that
 * `GET /v1/requests/:id` returns, the 201 reply to a create, and the error
 * body of every refusal. The relay builds its replies typed by these
 * schemas; the client library parses every reply with them, because the
 * relay's answers are a trust boundary for the agent.
 */
import { z } from "zod";
import { Decision } from "./decisions.js";
import { RequestKind } from "./request-body.js";

/** Longest a long-poll (`?wait=S`) is held, in seconds. */
export const MAX_WAIT_SECONDS = 60;

export const RequestStatus = z.enum(["pending", "answered", "expired", "cancelled", "failed"]);
export type RequestStatus = z.infer<typeof RequestStatus>;
export type EndedStatus = Exclude<RequestStatus, "pending">;

export const SlackRef = z.object({
  /** Channel id the message lives in (C…, D…, G…). */
  channel: z.string(),
  /** Message timestamp, Slack's id of the message. */
  ts: z.string(),
});
export type SlackRef = z.infer<typeof SlackRef>;

/** A request's message as the agent API shows it: where it is and, when the relay knows its workspace's URL, the link that opens it. */
export const SlackMessageView = SlackRef.extend({
  /** `https://<workspace>.slack.com/archives/<channel>/p<ts>`, built from auth.test's workspace URL; absent while that is unknown. */
  permalink: z.string().optional(),
});
export type SlackMessageView = z.infer<typeof SlackMessageView>;

export const Person = z.object({
  /** Slack user id, or "relay" when the relay answered itself (autonomous mode). */
  id: z.string(),
  /** Display name at the time of the answer, when known. */
  name: z.string().optional(),
  /** Where the person answered: `console` for the web console; absent → Slack (or the relay itself). */
  via: z.literal("console").optional(),
});
export type Person = z.infer<typeof Person>;

/** A request as `GET /v1/requests/:id` shows it. */
export const RequestView = z.object({
  id: z.string().min(1),
  kind: RequestKind,
  status: RequestStatus,
  /** ISO 8601 time. */
  createdAt: z.string(),
  /** ISO 8601 time after which the request expires; later once a person gives it more time ("+30 min"). */
  expiresAt: z.string().meta({
    description:
      'ISO 8601 time after which the request expires. It moves later when a person gives the request more time ("+30 min" in Slack, unless the body said `extendable: false`): a caller that waits should follow the latest one it read.',
  }),
  decision: Decision.optional(),
  answeredBy: Person.optional(),
  /** ISO 8601 time of the answer. */
  answeredAt: z.string().optional(),
  slack: SlackMessageView.optional(),
  /** Approvals counted so far, oldest first, on a request that needs several (docs/architecture.md §7). */
  approvals: z.array(z.object({ person: Person, /** ISO 8601 time. */ at: z.string() })).optional(),
  /** Why the request failed or was cancelled. */
  error: z.string().optional(),
});
export type RequestView = z.infer<typeof RequestView>;

/** The reply to `POST /v1/requests`: at least `{id, status, expiresAt}`, the whole view when the relay gives it. */
export const CreatedRequest = RequestView.partial().required({ id: true, status: true, expiresAt: true });
export type CreatedRequest = z.infer<typeof CreatedRequest>;

/** The relay's error shape: `{ error: { code, message, details? } }`. */
export const ErrorReply = z.object({
  error: z.object({ code: z.string(), message: z.string(), details: z.unknown().optional() }),
});
export type ErrorReply = z.infer<typeof ErrorReply>;
