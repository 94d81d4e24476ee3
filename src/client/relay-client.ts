/**
 * The agent's side of the HTTP API (docs/architecture.md §3): create a request, long-poll
 * it until it ends, cancel it, and forward a Claude Code hook call. Built to
 * outlive the relay's restarts and the network's blips: every call retries
 * with backoff, and `wait` keeps polling until the request has ended, so an
 * agent never mistakes an outage for an answer.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { HOOK_PATH, HookOutputOf, RETRIES_UNAVAILABLE_HEADER, type HookEvent, type HookOutput } from "../protocol/claude-code-hook.js";
import { CreatedRequest, MAX_WAIT_SECONDS, RequestView } from "../protocol/request-view.js";
import { Backoff, settleBefore } from "../protocol/timing.js";
import { localRelayPath, readLocalRelay } from "../protocol/local-relay.js";
import { abortError, isAbortError, RelayClientError } from "./errors.js";
import { askInteractive, type AskInteractiveOptions, type InteractiveAnswers } from "./interactive.js";
import { exchange, parseWith, type Attempt, type Exchange, type ReplyParser } from "./transport.js";
import type { CallOptions, CreateOptions, FetchLike, InteractiveQuestionInput, RelayClientOptions, RequestBody, Sleep } from "./types.js";

/** A single call (not a long-poll) counts as failed after this long. */
const CALL_TIMEOUT_MS = 30_000;
/** A pending reply quicker than this is not taken as a held long-poll: the loop slows down. */
const MIN_POLL_INTERVAL_MS = 250;
/** A best-effort cancel after an abort: one retry, a short timeout, so the caller is not held up. */
const BEST_EFFORT_CANCEL = { retries: 1, timeoutMs: 5000 };
/** A hook call gives up on the relay this long before Claude Code gives up on the hook. */
const HOOK_GIVE_UP_MARGIN_MS = 1000;

/** A long-poll held this long (seconds) while waiting to learn where the message was posted. */
const POSTING_POLL_SECONDS = 1;
/** How long after the wait starts short long-polls look for where the message was posted (ms). */
const POSTING_WATCH_MS = 30_000;

export interface WaitOptions extends CallOptions {
  /** The request's deadline (ISO 8601) when already known, for giving up on a relay that stays unreachable past it. */
  expiresAt?: string;
  /**
   * Called with every view read while the request is pending. With it, the
   * first polls are short (one second) until the view says where the
   * message was posted (`slack`), for at most 30 s; `expiresAt` moves later
   * when a person gives the request more time.
   */
  onPending?: (view: RequestView) => void;
}

export interface AskOptions extends CallOptions {
  /**
   * Called while the request is pending: first with the create reply
   * (`id`, `expiresAt`), then with every view read while waiting (see
   * WaitOptions.onPending), so a caller can say where the question was
   * posted and how long is left.
   */
  onPending?: (request: CreatedRequest) => void;
  /**
   * With an idempotency key: join the request it names only while that is
   * pending. One that has ended (answered, expired, cancelled, failed), or
   * that was asked with another body (409 relay_idempotency_mismatch), is
   * left as it is, and the question goes under `<key>#2`, then `#3`, … the
   * first key that is new or names a pending request. For a job re-run
   * (GitHub's "Re-run jobs"): it rejoins the question its earlier attempt
   * left waiting, yet never takes an old answer as this run's.
   */
  freshWhenEnded?: boolean;
  /** Hears each key that freshWhenEnded passed over, and why. */
  onPassedOver?: (passed: PassedOverKey) => void;
}

/** A key `ask` with freshWhenEnded did not join: its request had ended (`status`), or asked something else (`mismatch`). */
export interface PassedOverKey {
  key: string;
  /** The request the key names. */
  id: string;
  status: RequestView["status"] | "mismatch";
}

/** How many keys `ask` with freshWhenEnded tries (`<key>`, `<key>#2`, … `<key>#100`) before it gives up. */
const FRESH_KEYS = 100;

export interface ClaudeCodeHookOptions extends CallOptions {
  /** The hook's own timeout in seconds: the relay answers before it, and the call gives up a second before it. */
  timeoutSeconds: number;
}

/** A Claude Code hook input as Claude Code wrote it; the relay validates it. */
export type ClaudeCodeHookCall = Record<string, unknown> & { hook_event_name: HookEvent };

/** How far one call may go: its retries, the timeout of each attempt, and a deadline (Unix ms) no retry starts past. */
interface CallLimits {
  retries?: number;
  timeoutMs?: number;
  deadline?: number;
}

export class RelayClient {
  private readonly base: string;
  private readonly token: string;
  private readonly fetch: FetchLike;
  private readonly sleep: Sleep;
  private readonly waitSeconds: number;
  private readonly retries: number;
  private readonly graceMs: number;
  private readonly now: () => number;
  private readonly newKey: () => string;
  private readonly backoff: () => Backoff;

  constructor(options: RelayClientOptions = {}) {
    const local = options.url === undefined && options.token === undefined ? readLocalRelay(options.stateHome) : undefined;
    if (options.url === undefined && options.token === undefined && !local) {
      throw new TypeError(
        `RelayClient: give url and token, or start a relay on this machine in local mode (npm start), which writes ${localRelayPath(options.stateHome)}`,
      );
    }
    const url = local?.url ?? options.url ?? "";
    const token = local?.token ?? options.token;
    if (!/^https?:\/\//i.test(url)) throw new TypeError(`RelayClient: url must be an http(s) URL, got "${url}"`);
    if (!token) throw new TypeError("RelayClient: token is required");
    this.base = url.replace(/\/+$/, "");
    this.token = token;
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.sleep = options.sleep ?? ((ms, signal) => delay(ms, undefined, signal ? { signal } : {}));
    this.waitSeconds = Math.max(1, Math.min(MAX_WAIT_SECONDS, Math.floor(options.maxWaitSeconds ?? 50)));
    this.retries = Math.max(0, options.retries ?? 5);
    this.graceMs = options.unreachableGraceMs ?? 120_000;
    this.now = options.now ?? Date.now;
    this.newKey = options.newKey ?? randomUUID;
    const random = options.random ?? Math.random;
    const initial = options.initialRetryDelayMs ?? 250;
    const max = options.maxRetryDelayMs ?? 10_000;
    this.backoff = () => new Backoff(initial, max, random);
  }

  /**
   * Creates a request: the 201 reply `{id, status, expiresAt}` (the whole
   * view when the relay answered at once). Always sends an idempotency key,
   * so a POST retried after a lost reply never posts twice in Slack.
   */
  async request(body: RequestBody, options: CreateOptions = {}): Promise<CreatedRequest> {
    const key = options.idempotencyKey ?? body.idempotencyKey ?? this.newKey();
    return this.call({ method: "POST", path: "/v1/requests", body, headers: { "idempotency-key": key }, signal: options.signal }, parseWith(CreatedRequest));
  }

  /** The request as it is now. */
  async get(id: string, options: CallOptions = {}): Promise<RequestView> {
    return this.call({ method: "GET", path: requestPath(id), signal: options.signal }, parseWith(RequestView));
  }

  /**
   * Long-polls until the request has ended (answered, expired, cancelled or
   * failed) and returns it. Retries without limit while the relay restarts;
   * gives up with `relay_unreachable` only when the relay stays unreachable
   * well past the request's deadline. Aborting `signal` rejects with an
   * AbortError (the request itself is left alone; `ask` cancels it).
   */
  async wait(id: string, options: WaitOptions = {}): Promise<RequestView> {
    const backoff = this.backoff();
    const { onPending } = options;
    const watchUntil = this.now() + POSTING_WATCH_MS;
    let posted = false;
    let deadline = options.expiresAt === undefined ? undefined : Date.parse(options.expiresAt);
    for (;;) {
      const started = this.now();
      const seconds: number = onPending && !posted && started < watchUntil ? POSTING_POLL_SECONDS : this.waitSeconds;
      const path = `${requestPath(id)}?wait=${seconds}`;
      const timeoutMs = (seconds + 15) * 1000;
      const attempt = await this.attempt({ method: "GET", path, timeoutMs, signal: options.signal }, parseWith(RequestView));
      if (attempt.ok) {
        if (attempt.value.status !== "pending") return attempt.value;
        backoff.reset();
        deadline = Date.parse(attempt.value.expiresAt);
        posted ||= attempt.value.slack !== undefined;
        onPending?.(attempt.value);
        const elapsed = this.now() - started;
        if (elapsed < MIN_POLL_INTERVAL_MS) await this.pause(MIN_POLL_INTERVAL_MS - elapsed, options.signal);
        continue;
      }
      if (deadline !== undefined && this.now() > deadline + this.graceMs) {
        throw new RelayClientError(
          attempt.code,
          `${attempt.reason}; still failing ${Math.round((this.now() - deadline) / 1000)} seconds after the request's deadline`,
        );
      }
      await this.pause(backoff.next(attempt.retryAfterMs), options.signal);
    }
  }

  /** Cancels a pending request (its Slack message says so). Throws `relay_already_answered` (409) when it was answered first. */
  async cancel(id: string, options: CallOptions & { retries?: number; timeoutMs?: number } = {}): Promise<RequestView | undefined> {
    const lenient: ReplyParser<RequestView | null> = (json) => {
      const view = RequestView.safeParse(json);
      return view.success ? view.data : null;
    };
    const { retries, timeoutMs } = options;
    const view = await this.call({ method: "DELETE", path: requestPath(id), signal: options.signal }, lenient, { retries, timeoutMs });
    return view ?? undefined;
  }

  /**
   * Forwards a Claude Code hook call to the relay (POST /v1/hooks/claude-code)
   * and returns the hook JSON it answered, checked to be a decision for the
   * input's event. Retries an unreachable relay while the hook's time allows,
   * and an instance that is shutting down (it is told this call retries, so
   * it answers 503 rather than a deny; the retry reaches another instance);
   * throws RelayClientError when no usable answer came (the caller denies:
   * fail closed). The relay's keepalive spaces before the JSON are fine.
   */
  async claudeCodeHook(input: ClaudeCodeHookCall, options: ClaudeCodeHookOptions): Promise<HookOutput> {
    const { timeoutSeconds, signal } = options;
    const deadline = this.now() + Math.max(1000, timeoutSeconds * 1000 - HOOK_GIVE_UP_MARGIN_MS);
    const parse = parseWith<HookOutput>(HookOutputOf[input.hook_event_name]);
    const headers = { [RETRIES_UNAVAILABLE_HEADER]: "1" };
    return this.call({ method: "POST", path: `${HOOK_PATH}?timeout=${timeoutSeconds}`, body: input, headers, signal }, parse, { deadline });
  }

  /**
   * Creates a request and waits for it to end; returns the final view
   * (check `status`). Aborting `signal` cancels the request on the relay
   * (best effort) and rejects with an AbortError. `onPending` hears how the
   * request stands while it waits.
   */
  async ask(body: RequestBody, options: AskOptions = {}): Promise<RequestView> {
    const { signal, onPending } = options;
    if (signal?.aborted) throw abortError(signal);
    const idempotencyKey = body.idempotencyKey ?? this.newKey();
    // An abort during the POST rejects at once; the POST goes on, and the request it creates is cancelled.
    const creating = options.freshWhenEnded ? this.requestPending(body, idempotencyKey, options) : this.request(body, { idempotencyKey });
    const created = await settleBefore(creating, { signal }, () => {
      creating.then((request) => this.cancel(request.id, BEST_EFFORT_CANCEL)).catch(() => undefined);
      throw abortError(signal!);
    });
    try {
      const view = RequestView.safeParse(created);
      if (created.status !== "pending" && view.success) return view.data;
      if (created.status === "pending") onPending?.(created);
      return await this.wait(created.id, { expiresAt: created.expiresAt, signal, ...(onPending ? { onPending } : {}) });
    } catch (error) {
      if (isAbortError(error)) await this.cancel(created.id, BEST_EFFORT_CANCEL).catch(() => undefined);
      throw error;
    }
  }

  /** AskOptions.freshWhenEnded: the first of `key`, `key#2`, … whose request is new or pending. */
  private async requestPending(body: RequestBody, key: string, options: AskOptions): Promise<CreatedRequest> {
    const parse: ReplyParser<{ request: CreatedRequest; created: boolean }> = (json, status) => {
      const request = CreatedRequest.safeParse(json);
      return request.success ? { request: request.data, created: status === 201 } : undefined;
    };
    for (let n = 1; n <= FRESH_KEYS; n += 1) {
      const tried = n === 1 ? key : `${key}#${n}`;
      const headers = { "idempotency-key": tried };
      const sent = { ...body, idempotencyKey: tried };
      let reply;
      try {
        reply = await this.call({ method: "POST", path: "/v1/requests", body: sent, headers, signal: options.signal }, parse);
      } catch (error) {
        if (!(error instanceof RelayClientError) || error.code !== "relay_idempotency_mismatch") throw error;
        const id = (error.details as { id?: unknown } | undefined)?.id;
        options.onPassedOver?.({ key: tried, id: typeof id === "string" ? id : "", status: "mismatch" });
        continue;
      }
      if (reply.created || reply.request.status === "pending") return reply.request;
      options.onPassedOver?.({ key: tried, id: reply.request.id, status: reply.request.status });
    }
    throw new RelayClientError("relay_keys_used_up", `the keys ${key} to ${key}#${FRESH_KEYS} all name requests that have ended`);
  }

  /** Asks InteractiveQuestions and returns the answers keyed by question id; rejects when no answer came. */
  async askInteractive(questions: InteractiveQuestionInput[], options: AskInteractiveOptions = {}): Promise<InteractiveAnswers> {
    return askInteractive(this, questions, options);
  }

  /**
   * One call with bounded retries; throws the last failure as a
   * RelayClientError. With a deadline, each attempt may last until it and no
   * retry starts that would wait past it.
   */
  private async call<T>(request: Omit<Exchange, "base" | "token" | "timeoutMs">, parse: ReplyParser<T>, limits: CallLimits = {}): Promise<T> {
    const { retries = this.retries, timeoutMs = CALL_TIMEOUT_MS, deadline } = limits;
    const backoff = this.backoff();
    for (let attempt = 0; ; attempt += 1) {
      const attemptMs = deadline === undefined ? timeoutMs : Math.max(1, deadline - this.now());
      const result = await this.attempt({ ...request, timeoutMs: attemptMs }, parse);
      if (result.ok) return result.value;
      const wait = backoff.next(result.retryAfterMs);
      if (attempt >= retries || (deadline !== undefined && this.now() + wait >= deadline)) throw new RelayClientError(result.code, result.reason);
      await this.pause(wait, request.signal);
    }
  }

  private attempt<T>(request: Omit<Exchange, "base" | "token">, parse: ReplyParser<T>): Promise<Attempt<T>> {
    return exchange(this.fetch, { ...request, base: this.base, token: this.token }, parse);
  }

  private async pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
    try {
      await this.sleep(ms, signal);
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      throw error;
    }
    if (signal?.aborted) throw abortError(signal);
  }
}

function requestPath(id: string): string {
  return `/v1/requests/${encodeURIComponent(id)}`;
}
