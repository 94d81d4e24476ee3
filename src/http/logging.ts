/**
 * How HTTP requests appear in the relay's log (Fastify writes through the
 * relay's pino logger). Every line logged for a request carries its
 * `requestId`, method and path: the id is the caller's `X-Request-Id` when it
 * is a sane token (so one id follows a call through proxies and agents), a
 * fresh UUID otherwise, and goes back in the response's `X-Request-Id`.
 *
 * One line per request, when its response is finished: status, duration and
 * the agent token's name; never headers or bodies. Fastify's own pair of
 * lines (incoming, completed, each with the request serialised) is replaced:
 * a relay at a few hundred requests a second would write twice as many lines
 * for nothing an operator reads. Health probes and the API document are
 * logged at debug: load balancers call them every few seconds. Fastify's
 * other lines (a failed write, a broken stream) keep to the error, never the
 * request and reply objects Fastify would pass.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from "fastify";
import { pino } from "pino";

/** Letters, digits and . _ : - up to 128 characters: what tracing systems and proxies issue. */
const SANE_ID = /^[\w.:-]{1,128}$/;

export const REQUEST_ID_HEADER = "x-request-id";

export function requestIdOf(req: IncomingMessage, newId: () => string = randomUUID): string {
  const given = req.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && SANE_ID.test(given) ? given : newId();
}

/**
 * The child logger of one request: its id, method and path (never the query: it may name channels).
 *
 * pino writes a child's bindings as JSON text built by concatenation: a dozen
 * strings (about 450 bytes) that live as long as the request, so as long as a
 * held long-poll. They are copied into one flat string (about 110 bytes).
 */
export function requestLogger(logger: FastifyBaseLogger, bindings: { requestId?: unknown }, req: IncomingMessage): FastifyBaseLogger {
  const url = req.url ?? "/";
  const mark = url.indexOf("?");
  const child = logger.child({ requestId: bindings.requestId, method: req.method, path: mark < 0 ? url : url.slice(0, mark) });
  const written = child as unknown as Record<symbol, unknown>;
  const text = written[CHINDINGS];
  if (typeof text === "string") written[CHINDINGS] = Buffer.from(text).toString();
  return child;
}

const CHINDINGS = pino.symbols.chindingsSym;

/** Paths whose line is at debug. */
const QUIET_PATHS = new Set(["/healthz", "/readyz", "/openapi.json"]);

export class RequestLines extends LogController {
  constructor() {
    super({ requestIdLogLabel: "requestId" });
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = {
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      ...(request.agent ? { agent: request.agent } : {}),
      ...(error ? { error } : {}),
    };
    if (error) request.log.warn(fields, "request failed while its response was sent");
    else if (QUIET_PATHS.has(request.routeOptions.url ?? "")) request.log.debug(fields, "request finished");
    else request.log.info(fields, "request finished");
  }

  override defaultErrorLog(error: Error, request: FastifyRequest): void {
    request.log.error({ error }, "unexpected error while handling an HTTP request");
  }

  override writeHeadError(error: Error, request: FastifyRequest): void {
    request.log.warn({ error }, "could not write the response headers");
  }

  override streamError(error: Error, request: FastifyRequest): void {
    request.log.warn({ error }, "the response stream failed after its headers were sent");
  }

  override serializerError(error: Error, request: FastifyRequest, _reply: FastifyReply, { statusCode }: { statusCode: number }): void {
    request.log.error({ error, statusCode }, "could not serialise the response");
  }

  override routeNotFound(request: FastifyRequest): void {
    request.log.debug("route not found");
  }
}
