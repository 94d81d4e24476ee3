/**
 * Writing JSON responses: one place for the headers every response carries,
 * and the AbortSignal that tells a long-poll its client has gone.
 */
import type { ServerResponse } from "node:http";

export interface Reply {
  status: number;
  /** Serialised as JSON. */
  body: unknown;
  headers?: Readonly<Record<string, string>>;
  /** Close the connection after this response (e.g. an unread body is still arriving). */
  close?: boolean;
}

/** Headers of every JSON response the relay writes. */
export const COMMON_HEADERS = {
  "Content-Type": "application/json; charset=utf-8",
  "Cache-Control": "no-store",
  "X-Content-Type-Options": "nosniff",
} as const;

/** Sends `reply` unless the client is gone or a response was already started. */
export function send(res: ServerResponse, reply: Reply): void {
  if (res.destroyed || res.headersSent) return;
  const payload = JSON.stringify(reply.body);
  res.writeHead(reply.status, {
    ...COMMON_HEADERS,
    ...reply.headers,
    "Content-Length": Buffer.byteLength(payload),
    ...(reply.close ? { Connection: "close" } : {}),
  });
  res.end(payload);
}

/**
 * A signal that aborts when the client closes the connection before the
 * response is finished, so a dropped long-poll frees its waiter at once.
 * Only long-polls create one; the listener holds nothing but the controller.
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
