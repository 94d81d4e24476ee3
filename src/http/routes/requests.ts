/**
 * The agent API (DESIGN §3): create, read (long-poll) and cancel requests.
 * Thin: parse and check the input, call the RequestService, render its record.
 *
 * Status codes of POST /v1/requests: 201 for a new request; 200 when the
 * Idempotency-Key names one that already exists, with the request as GET
 * shows it (the agent may be retrying after a lost response and needs the
 * current status, not a stale "pending"). A new pending request without
 * `?wait` gets the short `{id, status, expiresAt}`; with `?wait`, or when it
 * was answered at once (autonomous mode), the full view.
 *
 * While the instance drains (SIGTERM) it takes no new work: a create, or a
 * long-poll on a request still pending, is 503 relay_shutting_down with
 * Retry-After (the client library retries it, reaching another instance);
 * plain reads and cancels are served.
 *
 * A request made with another agent token is reported as not found, exactly
 * as an unknown id, so its existence does not leak.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { RelayError, shuttingDown, StoreUnavailableError } from "../../requests/errors.js";
import type { RequestView } from "../../protocol/request-view.js";
import { toView, type RequestRecord } from "../../requests/model.js";
import type { RequestService } from "../../requests/service.js";
import type { AuthHook } from "../auth.js";
import { notFound } from "../errors.js";
import { parseCreateBody, pickIdempotencyKey } from "../parse.js";
import { clientGone, jsonBody, rawQuery, type HttpApp } from "../transport.js";
import { parseWait } from "../wait.js";

/** Longer ids are never issued; they are not found without asking the store. */
const MAX_ID_LENGTH = 200;

export interface RequestRoutesDeps {
  service: RequestService;
  authenticate: AuthHook;
  /** Longest `?wait=`, in seconds. */
  maxWaitSeconds: number;
}

type IdRoute = { Params: { id: string } };

export function registerRequestRoutes(app: HttpApp, { service, authenticate, maxWaitSeconds }: RequestRoutesDeps): void {
  app.post("/v1/requests", { onRequest: authenticate }, async (request, reply) => {
    const waitMs = parseWait(rawQuery(request), maxWaitSeconds);
    const body = parseCreateBody(jsonBody(request));
    const idempotencyKey = pickIdempotencyKey(body, idempotencyHeader(request));
    const { record, created } = await service.create({ tokenName: request.agent, body, idempotencyKey });
    reply.code(created ? 201 : 200);
    if (waitMs !== undefined && record.status === "pending") return longPoll(service, record.id, waitMs, reply);
    if (waitMs === undefined && created && record.status === "pending") {
      return { id: record.id, status: record.status, expiresAt: toView(record).expiresAt };
    }
    return toView(record);
  });

  app.get<IdRoute>("/v1/requests/:id", { onRequest: authenticate }, async (request, reply) => {
    const waitMs = parseWait(rawQuery(request), maxWaitSeconds);
    const record = await owned(service, request);
    if (waitMs !== undefined && record.status === "pending") {
      if (service.isDraining) throw shuttingDown();
      return longPoll(service, record.id, waitMs, reply);
    }
    return toView(record);
  });

  app.delete<IdRoute>("/v1/requests/:id", { onRequest: authenticate }, async (request) => {
    const record = await owned(service, request);
    const result = await service.cancel(record.id, `agent:${request.agent}`);
    if (result.outcome === "not_found") throw notFound("The request");
    const view = toView(result.record);
    if (result.outcome === "applied" || result.record.status === "cancelled") return view;
    if (result.record.status === "answered") {
      throw new RelayError("relay_already_answered", "The request was already answered.", view);
    }
    throw new RelayError("relay_already_ended", `The request has already ended (${result.record.status}).`, view);
  });
}

/**
 * Holds until the request ends, `waitMs` pass or the client leaves. Takes
 * only the id, so the caller's copy of the record is not kept alive by the
 * thousands of long-polls that may be held at once.
 */
async function longPoll(service: RequestService, id: string, waitMs: number, reply: FastifyReply): Promise<RequestView> {
  let record;
  try {
    record = await service.wait(id, waitMs, clientGone(reply.raw));
  } catch (error) {
    // The store went away while the request was pending: answer what was known, as a wait that ran out does.
    if (error instanceof StoreUnavailableError && error.lastKnown) return error.lastKnown;
    throw error;
  }
  if (!record) throw notFound("The request");
  return toView(record);
}

/** The request named by the path, if the calling token created it. */
async function owned(service: RequestService, request: FastifyRequest<IdRoute>): Promise<RequestRecord> {
  const { id } = request.params;
  const record = id.length === 0 || id.length > MAX_ID_LENGTH ? undefined : await service.get(id);
  if (!record || record.tokenName !== request.agent) throw notFound("The request");
  return record;
}

function idempotencyHeader(request: FastifyRequest): string | undefined {
  const value = request.headers["idempotency-key"];
  return Array.isArray(value) ? value.join(", ") : value;
}
