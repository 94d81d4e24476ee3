/**
 * The client library's own types: the request bodies as an agent writes them
 * (inputs of the relay's schemas, so fields with defaults may be left out)
 * and the options of RelayClient. The wire shapes themselves live in
 * src/protocol, shared with the relay.
 */
import type { z } from "zod";
import type { CreateRequestBody } from "../protocol/request-body.js";
import type { RequestView } from "../protocol/request-view.js";

/** A request body as an agent writes it: fields with defaults may be left out. */
export type RequestBody = z.input<typeof CreateRequestBody>;
export type PermissionRequestBody = Extract<RequestBody, { kind: "permission" }>;
export type StepGateRequestBody = Extract<RequestBody, { kind: "step_gate" }>;
export type AskUserQuestionRequestBody = Extract<RequestBody, { kind: "ask_user_question" }>;
export type InteractiveQuestionsRequestBody = Extract<RequestBody, { kind: "interactive_questions" }>;
/** One InteractiveQuestion as a tool returns it (`required` defaults to true). */
export type InteractiveQuestionInput = InteractiveQuestionsRequestBody["questions"][number];

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;
/** Waits `ms` milliseconds; rejects when `signal` aborts. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RelayClientOptions {
  /**
   * Base URL of the relay, e.g. "https://relay.example.com". With neither
   * `url` nor `token`: the relay started on this machine in local mode
   * (`npm start` without Slack), from the file it wrote (`stateHome`).
   */
  url?: string;
  /** Agent token, sent as `Authorization: Bearer <token>`. */
  token?: string;
  /** Where a local relay's file is looked for when neither `url` nor `token` is given: pass `process.env.XDG_STATE_HOME`; default `~/.local/state`. */
  stateHome?: string;
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
