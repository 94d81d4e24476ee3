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
 * A request made with another agent token is reported as not found, exactly
 * as an unknown id, so its existence does not leak.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { RelayError } from "../../requests/errors.js";
import { toView, type RequestRecord } from "../../requests/model.js";
import type { RequestService } from "../../requests/service.js";
import { readJson } from "../body.js";
import { notFound } from "../errors.js";
import { parseCreateBody, pickIdempotencyKey } from "../parse.js";
import { clientGone, type Reply } from "../response.js";
import type { RouteContext, RouteTable } from "../route.js";
import { parseWait } from "../wait.js";

/** Longer ids are never issued; they are not found without asking the store. */
const MAX_ID_LENGTH = 200;

export interface RequestRoutesDeps {
  service: RequestService;
  /** Largest accepted body, in bytes. */
  bodyLimitBytes: number;
  /** Longest `?wait=`, in seconds. */
  maxWaitSeconds: number;
}

export function registerRequestRoutes(router: RouteTable, deps: RequestRoutesDeps): void {
  const { service, bodyLimitBytes, maxWaitSeconds } = deps;

  router.add("POST", "/v1/requests", {
    auth: true,
    async handle({ req, res, query, agent }) {
      const waitMs = parseWait(query, maxWaitSeconds);
      const body = parseCreateBody(await readJson(req, bodyLimitBytes));
      const idempotencyKey = pickIdempotencyKey(body, idempotencyHeader(req));
      const { record, created } = await service.create({ tokenName: agent, body, idempotencyKey });
      const status = created ? 201 : 200;
      if (waitMs !== undefined && record.status === "pending") return longPoll(service, record.id, waitMs, res, status);
      if (waitMs === undefined && created && record.status === "pending") {
        return { status, body: { id: record.id, status: record.status, expiresAt: toView(record).expiresAt } };
      }
      return { status, body: toView(record) };
    },
  });

  router.add("GET", "/v1/requests/:id", {
    auth: true,
    async handle(ctx) {
      const waitMs = parseWait(ctx.query, maxWaitSeconds);
      const record = await owned(service, ctx);
      if (waitMs !== undefined && record.status === "pending") return longPoll(service, record.id, waitMs, ctx.res, 200);
      return { status: 200, body: toView(record) };
    },
  });

  router.add("DELETE", "/v1/requests/:id", {
    auth: true,
    async handle(ctx): Promise<Reply> {
      const record = await owned(service, ctx);
      const result = await service.cancel(record.id, `agent:${ctx.agent}`);
      if (result.outcome === "not_found") throw notFound("The request");
      const view = toView(result.record);
      if (result.outcome === "applied" || result.record.status === "cancelled") return { status: 200, body: view };
      if (result.record.status === "answered") {
        throw new RelayError("relay_already_answered", "The request was already answered.", view);
      }
      throw new RelayError("relay_already_ended", `The request has already ended (${result.record.status}).`, view);
    },
  });
}

/**
 * Holds until the request ends, `waitMs` pass or the client leaves. Takes
 * only the id, so the caller's copy of the record is not kept alive by the
 * thousands of long-polls that may be held at once.
 */
async function longPoll(service: RequestService, id: string, waitMs: number, res: ServerResponse, status: number): Promise<Reply> {
  const record = await service.wait(id, waitMs, clientGone(res));
  if (!record) throw notFound("The request");
  return { status, body: toView(record) };
}

/** The request named by the path, if the calling token created it. */
async function owned(service: RequestService, { params, agent }: RouteContext): Promise<RequestRecord> {
  const id = params.id;
  const record = id === undefined || id.length > MAX_ID_LENGTH ? undefined : await service.get(id);
  if (!record || record.tokenName !== agent) throw notFound("The request");
  return record;
}

function idempotencyHeader(req: IncomingMessage): string | undefined {
  const value = req.headers["idempotency-key"];
  return Array.isArray(value) ? value.join(", ") : value;
}
