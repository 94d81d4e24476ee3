/**
 * The MCP tools' port (src/mcp/relay.ts) inside the relay: POST /mcp's calls
 * go straight to the RequestService, as the agent API's would, under the
 * calling agent token (its requests only, its idempotency keys), each
 * create counted against the token's create rate limit like the agent API's.
 */
import { setTimeout as delay } from "node:timers/promises";
import type { Logger } from "../logger.js";
import type { McpRelay } from "../mcp/relay.js";
import type { FastifyRequest } from "fastify";
import { internalErrorMessage, RelayError, StoreUnavailableError, TooManyPendingError } from "../requests/errors.js";
import { mayView } from "../requests/listing.js";
import { toView, type RequestRecord } from "../requests/model.js";
import type { RequestService } from "../requests/service.js";
import { STORE_RETRY_INTERVAL_MS } from "../requests/store.js";
import { notFound } from "./errors.js";
import { parseCreateBody } from "./parse.js";
import type { CreateRateLimit } from "./rate-limit.js";

/** Longest single hold of a waiting call, in milliseconds; the wait goes on after it. */
const HOLD_MS = 60_000;

export interface ServiceRelayOptions {
  service: RequestService;
  /** The agent token that made the call. */
  agent: string;
  logger: Logger;
  /** Quoted to the caller, and logged, when the relay fails (the HTTP request id). */
  reference: string;
  /** The create rate limit, and the HTTP request (POST /mcp) whose token each create counts against; absent → none. */
  createLimit?: { limit: CreateRateLimit; request: FastifyRequest };
}

export function serviceRelay({ service, agent, logger, reference, createLimit }: ServiceRelayOptions): McpRelay {
  const owned = async (id: string): Promise<RequestRecord> => {
    const record = id.length > 200 ? undefined : await service.getExpiringIfOverdue(id);
    if (!record || !mayView({ tokenName: agent, role: "agent" }, record)) throw notFound("The request");
    return record;
  };
  const held = async (id: string, waitMs: number, signal: AbortSignal): Promise<RequestRecord> => {
    for (;;) {
      try {
        const record = await service.wait(id, waitMs, signal);
        if (!record) throw notFound("The request");
        return record;
      } catch (error) {
        // The store went away: wait it out (the request's expiry still ends it), unless the call is gone.
        if (!(error instanceof StoreUnavailableError) || signal.aborted) throw error;
        await delay(STORE_RETRY_INTERVAL_MS, undefined, { signal }).catch(() => undefined);
      }
    }
  };
  return {
    async create(body, idempotencyKey) {
      const parsed = parseCreateBody(body);
      await createLimit?.limit.check(createLimit.request);
      const { record } = await service.create({ tokenName: agent, body: parsed, ...(idempotencyKey ? { idempotencyKey, joinOnKey: true } : {}) });
      return toView(record);
    },
    async untilEnded(id, signal) {
      for (;;) {
        const record = await held(id, HOLD_MS, signal);
        if (record.status !== "pending") return toView(record);
        if (signal.aborted) throw new DOMException("The call was cancelled.", "AbortError");
      }
    },
    async check(id, waitMs, signal) {
      await owned(id);
      return toView(await held(id, waitMs, signal));
    },
    async cancel(id, reason) {
      await service.cancel(id, `agent:${agent}`, reason);
    },
    failureReason(error) {
      if (error instanceof TooManyPendingError) {
        return `The approval relay refused the request (${error.message} Try again in ${error.retryAfterSeconds} s.), so nothing was approved.`;
      }
      if (error instanceof RelayError) return `The approval relay refused the request (${error.message}), so nothing was approved.`;
      if (error instanceof Error && error.name === "AbortError") return "The call was cancelled, so the request was cancelled.";
      logger.error({ requestId: reference, error }, "an MCP tool call failed inside the relay");
      return `${internalErrorMessage(reference)} Nothing was approved.`;
    },
  };
}
