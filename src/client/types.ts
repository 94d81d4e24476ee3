/**
 * What the client library sends and what it reads back from the relay. The
 * relay's replies are a trust boundary for the agent, so every reply is
 * parsed with these schemas; the request bodies reuse the relay's own schema
 * types (type-only imports: nothing of the server lands in the import graph).
 */
import { z } from "zod";
import { Decision } from "../requests/decisions.js";
import type { AgentInfo, CreateRequestBody } from "../requests/schemas.js";

export type { AgentInfo };

/** A request body as an agent writes it: fields with defaults may be left out. */
export type RequestBody = z.input<typeof CreateRequestBody>;
export type PermissionRequestBody = Extract<RequestBody, { kind: "permission" }>;
export type StepGateRequestBody = Extract<RequestBody, { kind: "step_gate" }>;
export type AskUserQuestionRequestBody = Extract<RequestBody, { kind: "ask_user_question" }>;
export type InteractiveQuestionsRequestBody = Extract<RequestBody, { kind: "interactive_questions" }>;
/** One InteractiveQuestion as a tool returns it (`required` defaults to true). */
export type InteractiveQuestionInput = InteractiveQuestionsRequestBody["questions"][number];

export const RequestStatus = z.enum(["pending", "answered", "expired", "cancelled", "failed"]);
export type RequestStatus = z.infer<typeof RequestStatus>;
export type EndedStatus = Exclude<RequestStatus, "pending">;

/** A request as `GET /v1/requests/:id` shows it (DESIGN §3). */
export const RequestView = z.object({
  id: z.string().min(1),
  kind: z.enum(["permission", "step_gate", "ask_user_question", "interactive_questions"]),
  status: RequestStatus,
  /** ISO 8601 time. */
  createdAt: z.string(),
  /** ISO 8601 time after which the request expires. */
  expiresAt: z.string(),
  decision: Decision.optional(),
  answeredBy: z.object({ id: z.string(), name: z.string().optional() }).optional(),
  /** ISO 8601 time of the answer. */
  answeredAt: z.string().optional(),
  slack: z.object({ channel: z.string(), ts: z.string() }).optional(),
  /** Why the request failed. */
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

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;
/** Waits `ms` milliseconds; rejects when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RelayClientOptions {
  /** Base URL of the relay, e.g. "https://relay.example.com". */
  url: string;
  /** Agent token, sent as `Authorization: Bearer <token>`. */
  token: string;
  fetch?: FetchLike;
  sleep?: Sleep;
  /** Longest single long-poll in seconds (the relay holds at most 60). Default 50. */
  maxWaitSeconds?: number;
  /** Retries of a create, get or cancel before it fails (wait retries without limit). Default 5. */
  retries?: number;
  /** First retry delay in milliseconds, doubled on each retry. Default 250. */
  initialRetryDelayMs?: number;
  /** Longest retry delay in milliseconds. Default 10,000. */
  maxRetryDelayMs?: number;
  /**
   * How long `wait` keeps trying an unreachable relay once the request's
   * deadline has passed, in milliseconds, before it throws
   * `relay_unreachable`. Default 120,000.
   */
  unreachableGraceMs?: number;
  /** Returns a number in [0, 1) for jitter. */
  random?: () => number;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** Makes idempotency keys. */
  newKey?: () => string;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface CreateOptions extends CallOptions {
  /** The same key from the same token returns the same request and posts once. Default: a fresh UUID. */
  idempotencyKey?: string;
}

/** The narrowest client the adapters need, so a fake is trivial. */
export interface Asker {
  ask(body: RequestBody, options?: CallOptions): Promise<RequestView>;
}
