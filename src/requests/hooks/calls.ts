/**
 * A Claude Code hook call, from its parsed input to the hook JSON it is
 * answered with (docs/architecture.md §3). The HTTP route parses and renders; this holds
 * the call, and is what shutdown asks to let go.
 *
 * - The call opens (or joins) the request it stands for: a retry of the same
 *   tool call joins the pending request under its idempotency key and posts
 *   nothing new; an answer found under the key is returned only when the key
 *   proves it is this call's (see hookRequestKey).
 * - It is held until the request ends or the reply deadline (a few seconds
 *   before the hook's own timeout, see ./deadline.ts), then answered
 *   with a deny saying no one answered: Claude Code would otherwise let the
 *   tool run when its timeout passes.
 * - Once the request exists every outcome is hook JSON, a deny unless a person
 *   allowed, an internal error too (logged with a reference): Claude Code
 *   ignores a non-2xx reply and, without `onFailure: "block"`, runs the tool.
 * - The caller leaving (the user pressed Esc, the session ended) cancels the
 *   request, so the Slack message says so; unless another call for the same
 *   tool call still holds it on this instance.
 * - Shutdown comes in two steps. While the instance drains (SIGTERM, see
 *   RequestService.drain) held calls go on and may still be answered, and a
 *   new call is refused without creating anything: with a deny saying the
 *   relay is restarting, because Claude Code does not retry an http hook and
 *   runs the tool on a non-2xx unless the hook says `onFailure: "block"`; or,
 *   when the caller says it retries (RETRIES_UNAVAILABLE_HEADER, sent by
 *   src/client), with 503 relay_shutting_down, which it retries elsewhere.
 *   close() then answers every call still held with a deny saying the relay
 *   restarted and cancels its request, so nobody approves what the agent was
 *   told is denied (the connection cannot be handed over, whatever the store).
 * - Store outages are waited out until the reply deadline: opening the
 *   request is retried every STORE_RETRY_INTERVAL_MS (the idempotency key
 *   makes a repeat safe), a held call keeps holding (see service.wait). If
 *   the store is still unavailable at the deadline, the call is denied with
 *   STORE_UNAVAILABLE_REASON. Whatever a store call does, the reply leaves
 *   HARD_MARGIN_MS before Claude Code's own timeout; a request stored too late
 *   for its call is cancelled, so nobody approves what the agent was denied.
 * - When Slack cannot say whose email the hook URL's `requestedBy` is, nothing
 *   is created and the call is denied saying so (503 relay_slack_unavailable
 *   to a caller that retries). So is a call whose agent token holds as many
 *   pending requests as it may (relay_too_many_pending's message), and a
 *   repeat of a pending tool call from the same session joins that request.
 */
import type { ClaudeCodeHookInput } from "../../protocol/claude-code-hook.js";
import { CreateRequestBody, type Labels, type RequestedBy } from "../../protocol/request-body.js";
import { silentLogger, type Logger } from "../../logger.js";
import { settleBefore } from "../../protocol/timing.js";
import {
  fieldProblems,
  internalErrorMessage,
  invalidRequest,
  RelayError,
  shuttingDown,
  SlackUnavailableError,
  StoreUnavailableError,
  TooManyPendingError,
} from "../errors.js";
import type { RequestRecord } from "../model.js";
import type { RequestService } from "../service.js";
import { STORE_RETRY_INTERVAL_MS } from "../store.js";
import { HARD_MARGIN_MS, holdUntil, replyDeadlineSeconds } from "./deadline.js";
import { denyOutput, hookOutput, type HookOutput } from "./reply.js";
import { hookRequestBody, hookRequestKey, keyForAttempt } from "./request.js";

/** Requests tried per hook call before giving up on idempotency (each ended one is asked again under the next key). */
const MAX_KEY_ATTEMPTS = 20;
export const DISCONNECT_REASON = "Claude Code closed the connection";
export const SHUTDOWN_REASON = "The relay restarted before anyone answered";
/** The deny of a call that arrives while the instance drains: nothing was asked. */
export const DRAINING_DENY = "The relay is restarting and asked no one, so the tool call was denied. Try the tool call again.";
export const SLACK_UNAVAILABLE_DENY = "Slack could not be asked who the request is for, so no one was asked and the tool call was denied. Try again shortly.";
export const STORE_UNAVAILABLE_REASON = "The relay's storage is unavailable, so the tool call was denied. Try again once the relay is back.";
/** Why a request stored too late for its hook call is cancelled. */
export const LATE_REASON = "Claude Code's hook timeout came before the request's";

export interface HookCall {
  /** Name of the agent token that made the call. */
  agent: string;
  input: ClaudeCodeHookInput;
  /** Claude Code's timeout for this hook, in seconds. */
  timeoutSeconds: number;
  /** Slack channel or user id; absent → the relay's default channel. */
  channel?: string;
  /** The hook URL's `label.<key>=` parameters. */
  labels?: Labels;
  /** The hook URL's `requestedBy=` parameter. */
  requestedBy?: RequestedBy;
  /** Unix time in milliseconds when the call arrived. */
  startedAt: number;
  /** Aborts when the caller leaves. */
  gone: AbortSignal;
  /** Quoted to the caller, and logged, when the relay fails (the HTTP request id). */
  reference: string;
  /** The caller retries a 503 itself (src/client does): a call refused while draining gets relay_shutting_down, not a deny. */
  retriesUnavailable?: boolean;
}

export interface HookCallsDeps {
  service: RequestService;
  logger?: Logger;
  /** Unix time in milliseconds. */
  now?: () => number;
}

export class HookCalls {
  private readonly service: RequestService;
  private readonly logger: Logger;
  private readonly now: () => number;
  /** Hook calls held on this instance, per request id. */
  private readonly holders = new Map<string, number>();
  /** Calls not answered yet; close() waits for them. */
  private readonly inFlight = new Set<Promise<HookOutput>>();
  private readonly shutdown = new AbortController();

  constructor(deps: HookCallsDeps) {
    this.service = deps.service;
    this.logger = deps.logger ?? silentLogger;
    this.now = deps.now ?? Date.now;
  }

  /**
   * The hook JSON to answer `call` with. Throws a RelayError (400) only when
   * the call cannot become a request, before anything is created.
   */
  answer(call: HookCall): Promise<HookOutput> {
    const body = requestBody(call);
    if (this.service.isDraining && !this.closed) {
      if (call.retriesUnavailable) throw shuttingDown();
      return Promise.resolve(denyOutput(call.input.hook_event_name, DRAINING_DENY));
    }
    const answered = this.settle(call, body);
    this.inFlight.add(answered);
    // Not finally(): its promise would reject again, unhandled, when the create is refused with a 400 (the caller handles `answered`).
    const forget = () => this.inFlight.delete(answered);
    answered.then(forget, forget);
    return answered;
  }

  /** Number of calls not answered yet. */
  get held(): number {
    return this.inFlight.size;
  }

  /** Of those, the calls waiting for their request's answer now: each is also one of RequestService.waiting. */
  get waiting(): number {
    let waiting = 0;
    for (const count of this.holders.values()) waiting += count;
    return waiting;
  }

  /** Shutdown: every held call is denied and its request cancelled; resolves once each has its answer. */
  async close(): Promise<void> {
    this.shutdown.abort();
    await Promise.allSettled([...this.inFlight]);
  }

  private get closed(): boolean {
    return this.shutdown.signal.aborted || this.service.isClosed;
  }

  /** The answer, at the latest HARD_MARGIN_MS before Claude Code's timeout: a deny when a store call still holds it up then. */
  private async settle(call: HookCall, body: CreateRequestBody): Promise<HookOutput> {
    const event = call.input.hook_event_name;
    if (this.closed) return denyOutput(event, `${SHUTDOWN_REASON}, so the tool call was denied.`);
    const late = new AbortController();
    const timer = setTimeout(() => late.abort(), Math.max(0, call.startedAt + call.timeoutSeconds * 1000 - HARD_MARGIN_MS - this.now()));
    try {
      return await settleBefore(this.decide(call, body, late.signal), { signal: late.signal }, () => {
        this.logger.warn({ requestId: call.reference }, "the store held a Claude Code hook call up to its deadline: denied");
        return denyOutput(event, STORE_UNAVAILABLE_REASON);
      });
    } finally {
      clearTimeout(timer);
    }
  }

  private async decide(call: HookCall, body: CreateRequestBody, late: AbortSignal): Promise<HookOutput> {
    const event = call.input.hook_event_name;
    let record: RequestRecord | undefined;
    try {
      const opened = await this.open(call, body, late);
      const until = holdUntil(call.startedAt, call.timeoutSeconds, opened.expiresAt);
      record = opened.status === "pending" && !late.aborted ? await this.hold(opened, until, call.gone) : opened;
      if (record?.status === "pending" && this.closed && !call.gone.aborted) {
        const cancelled = await this.service.cancel(record.id, "relay", SHUTDOWN_REASON).catch(() => undefined);
        // Answered in the meantime (a click on another instance): the agent gets that answer, as Slack shows it.
        if (cancelled?.outcome === "already_ended") return hookOutput(event, cancelled.record);
        return denyOutput(event, `${SHUTDOWN_REASON}, so the tool call was denied.`);
      }
      if (record?.status === "pending" && !call.gone.aborted && !this.holders.has(record.id) && record.expiresAt <= this.now()) {
        // The hold ran to the request's own deadline and read it just before the expiry was written (a busy loop fires timers early): expire it, as the sweep would.
        record = await this.service.getExpiringIfOverdue(record.id);
      }
      if (record?.status === "pending" && !call.gone.aborted && !this.holders.has(record.id)) {
        // The call's deadline came before the request's (it was stored late, through a store outage): end it with the call.
        const result = await this.service.cancel(record.id, "relay", LATE_REASON);
        if ("record" in result) record = result.record;
      }
    } catch (error) {
      // Drain began between the check in answer() and the create.
      if (error instanceof RelayError && error.code === "relay_shutting_down" && !call.retriesUnavailable) return denyOutput(event, DRAINING_DENY);
      if (error instanceof SlackUnavailableError && !call.retriesUnavailable) {
        this.logger.warn({ requestId: call.reference, reason: error.reason }, "Slack could not be asked about a Claude Code hook call's request: denied");
        return denyOutput(event, SLACK_UNAVAILABLE_DENY);
      }
      if (error instanceof StoreUnavailableError) {
        this.logger.warn({ requestId: call.reference, reason: error.reason }, "the store is unavailable at a Claude Code hook call's deadline: denied");
        return denyOutput(event, STORE_UNAVAILABLE_REASON);
      }
      if (error instanceof TooManyPendingError) return denyOutput(event, `${error.message} The tool call was denied.`);
      if (error instanceof RelayError) throw error;
      this.logger.error({ requestId: call.reference, error }, "a Claude Code hook call failed inside the relay");
      return denyOutput(event, `${internalErrorMessage(call.reference)} The tool call was denied.`);
    }
    if (!record) return denyOutput(event, "The approval request was lost by the relay, so the tool call was denied.");
    return hookOutput(event, record);
  }

  /**
   * The request this hook call stands for: a pending one under its key (a
   * retry joins it), an answered one when the key proves it is this call's
   * answer, else a new one under the next key.
   */
  private async open(call: HookCall, body: CreateRequestBody, late: AbortSignal): Promise<RequestRecord> {
    const replyAt = call.startedAt + replyDeadlineSeconds(call.timeoutSeconds) * 1000;
    for (;;) {
      try {
        return await this.openOnce(call, body);
      } catch (error) {
        const stop = late.aborted || call.gone.aborted || this.closed || this.now() + STORE_RETRY_INTERVAL_MS >= replyAt;
        if (!(error instanceof StoreUnavailableError) || stop) throw error;
        await pause(STORE_RETRY_INTERVAL_MS, [late, call.gone, this.shutdown.signal]);
      }
    }
  }

  private async openOnce({ agent, input }: HookCall, body: CreateRequestBody): Promise<RequestRecord> {
    const { key, answerBelongsToCall } = hookRequestKey(input);
    for (let attempt = 1; attempt <= MAX_KEY_ATTEMPTS; attempt += 1) {
      const { record, created } = await this.service.create({ tokenName: agent, body, idempotencyKey: keyForAttempt(key, attempt), joinOnKey: true });
      // One this call just created is its own, even answered at once (by a rule).
      if (created || record.status === "pending" || (record.status === "answered" && answerBelongsToCall)) return record;
    }
    return (await this.service.create({ tokenName: agent, body })).record;
  }

  /** Waits for the request to end until `until`; cancels it when the last caller holding it leaves. */
  private async hold(record: RequestRecord, until: number, gone: AbortSignal): Promise<RequestRecord | undefined> {
    const { id } = record;
    this.holders.set(id, (this.holders.get(id) ?? 0) + 1);
    let last = false;
    let ended: RequestRecord | undefined;
    const stop = new AbortController();
    const onStop = () => stop.abort();
    for (const signal of [gone, this.shutdown.signal]) signal.addEventListener("abort", onStop, { once: true });
    if (gone.aborted || this.shutdown.signal.aborted) stop.abort();
    try {
      ended = await this.service.wait(id, Math.max(0, until - this.now()), stop.signal);
    } finally {
      for (const signal of [gone, this.shutdown.signal]) signal.removeEventListener("abort", onStop);
      const left = (this.holders.get(id) ?? 1) - 1;
      if (left > 0) this.holders.set(id, left);
      else this.holders.delete(id);
      last = left === 0;
    }
    if (gone.aborted && last && ended?.status === "pending") {
      const result = await this.service.cancel(id, "claude-code", DISCONNECT_REASON);
      this.logger.info({ id, outcome: result.outcome }, "claude code hook call left before the answer");
    }
    return ended;
  }
}

/** The request a hook call becomes; it expires when the relay must reply. */
function requestBody({ input, timeoutSeconds, channel, labels, requestedBy }: HookCall): CreateRequestBody {
  const built = hookRequestBody(input, {
    timeoutSeconds: replyDeadlineSeconds(timeoutSeconds),
    ...(channel ? { channel } : {}),
    ...(labels ? { labels } : {}),
    ...(requestedBy ? { requestedBy } : {}),
  });
  const result = CreateRequestBody.safeParse(built);
  if (result.success) return result.data;
  throw invalidRequest(fieldProblems(result.error.issues));
}

/** Resolves after `ms`, or at once when one of `signals` aborts. */
function pause(ms: number, signals: AbortSignal[]): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      for (const signal of signals) signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    for (const signal of signals) signal.addEventListener("abort", done, { once: true });
  });
}
