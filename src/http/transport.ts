/**
 * What the routes read from a Fastify request beyond its path: the raw query
 * text (the relay's query parsers refuse repeated or unknown parameters, so
 * they need it as sent), the JSON body, and whether the client is still there.
 *
 * Bodies are read by Fastify with its byte limit (refused before reading when
 * Content-Length says so, and at the first chunk past it otherwise). Before
 * the 413 goes out, the rest of the upload is read and dropped, within
 * DISCARD_BOUNDS (discardUpload): a client still sending when the relay
 * closes the connection gets a broken pipe, never the 413 (Node's fetch, so
 * the client library, did), and retries as if the relay were down. The
 * relay's own parser accepts application/json and any +json type, uncompressed;
 * any other type is left unread, and a route that wants JSON refuses it (415).
 */
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { Logger } from "../logger.js";
import { RelayError } from "../requests/errors.js";
import type { LeaveSignal } from "../requests/waiters.js";
import { unsupportedMediaType } from "./errors.js";

/** The relay's Fastify instance: it logs through the relay's pino logger. */
export type HttpApp = FastifyInstance<Server, IncomingMessage, ServerResponse, Logger>;

/** application/json, or any +json type (application/merge-patch+json, …), with optional parameters. */
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * Replaces Fastify's parsers: JSON types are read as text and parsed (invalid
 * JSON → 400 relay_invalid_json; `__proto__` keys stay plain data, as with
 * JSON.parse, and the schemas refuse them); any other type is left unread.
 */
export function useJsonBodies(app: HttpApp): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser(JSON_TYPE, { parseAs: "string" }, (_request, text, done) => {
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(new RelayError("relay_invalid_json", "The body is not valid JSON."), undefined);
    }
  });
  app.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
  // Checked before a byte is read: a compressed body would only be refused once read.
  app.addHook("preParsing", (request, _reply, payload, done) => {
    const encoding = request.headers["content-encoding"];
    if (encoding !== undefined && encoding.toLowerCase() !== "identity" && isJson(request)) {
      done(new RelayError("relay_unsupported_media_type", "Send the body uncompressed (no Content-Encoding)."));
      return;
    }
    done(null, payload);
  });
}

/** The parsed JSON body: 415 when the request carries no JSON, 400 when its JSON body is empty. */
export function jsonBody(request: FastifyRequest): unknown {
  if (request.body !== undefined) return request.body;
  if (!isJson(request)) throw unsupportedMediaType();
  throw new RelayError("relay_invalid_json", "The body is not valid JSON.");
}

function isJson(request: FastifyRequest): boolean {
  const type = request.headers["content-type"];
  return type !== undefined && JSON_TYPE.test(type);
}

/** The query text after "?", "" when there is none. */
export function rawQuery(request: FastifyRequest): string {
  const url = request.raw.url ?? "";
  const mark = url.indexOf("?");
  return mark < 0 ? "" : url.slice(mark + 1);
}

/**
 * A signal that aborts when the client closes the connection before the
 * response is finished, so a dropped long-poll or hook call frees its waiter
 * at once. Watches the response: a request stream closes as soon as its body
 * has been read, long before the client goes.
 */
export function clientGone(res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  if (res.destroyed || res.socket?.destroyed) {
    controller.abort();
    return controller.signal;
  }
  res.once("close", () => {
    if (!res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/**
 * `clientGone` for a long-poll, in a fraction of its memory (thousands may be
 * held at once): one listener on the response, no AbortController. Aborts,
 * as clientGone does, when the connection closes before the response is
 * finished; its listeners (a long-poll's waiter) are told once.
 */
export function clientLeaves(res: ServerResponse): LeaveSignal {
  return new ResponseWatch(res);
}

type Listener = { handleEvent(): void };

class ResponseWatch implements LeaveSignal {
  aborted: boolean;
  /** One listener (a long-poll has one) is kept as it is, more in an array. */
  private listeners: Listener | Listener[] | undefined;

  constructor(res: ServerResponse) {
    this.aborted = res.destroyed || res.socket?.destroyed === true;
    if (!this.aborted) res.on("close", () => this.closed(res));
  }

  addEventListener(_type: "abort", listener: Listener): void {
    const held = this.listeners;
    if (held === undefined) this.listeners = listener;
    else if (Array.isArray(held)) held.push(listener);
    else this.listeners = [held, listener];
  }

  removeEventListener(_type: "abort", listener: Listener): void {
    const held = this.listeners;
    if (held === listener) this.listeners = undefined;
    else if (Array.isArray(held) && held.includes(listener)) held.splice(held.indexOf(listener), 1);
  }

  private closed(res: ServerResponse): void {
    if (res.writableFinished) return;
    this.aborted = true;
    const held = this.listeners;
    this.listeners = undefined;
    if (Array.isArray(held)) for (const listener of held) listener.handleEvent();
    else held?.handleEvent();
  }
}

/**
 * How much of an oversized upload the relay reads and drops before it answers
 * 413 and closes: the rest of it, unless it goes on past `bytes` more, for
 * longer than `ms`, or stalls for `idleMs` (a client that sent its headers
 * and waits for an answer before sending the body).
 */
export const DISCARD_BOUNDS = { bytes: 16 * 1024 * 1024, ms: 5_000, idleMs: 1_000 } as const;

/** Reads and drops what is left of `req`'s body; resolves once it ended or a bound was reached. */
export function discardUpload(req: IncomingMessage, bounds: { bytes: number; ms: number; idleMs: number } = DISCARD_BOUNDS): Promise<void> {
  if (req.complete || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let dropped = 0;
    const finish = () => {
      clearTimeout(total);
      clearTimeout(idle);
      req.off("data", onData);
      req.off("end", finish);
      req.off("close", finish);
      req.off("error", finish);
      resolve();
    };
    const total = setTimeout(finish, bounds.ms);
    let idle = setTimeout(finish, bounds.idleMs);
    const onData = (chunk: Buffer) => {
      dropped += chunk.length;
      if (dropped > bounds.bytes) return finish();
      clearTimeout(idle);
      idle = setTimeout(finish, bounds.idleMs);
    };
    req.on("data", onData);
    req.once("end", finish);
    req.once("close", finish);
    req.once("error", finish);
    req.resume();
  });
}
