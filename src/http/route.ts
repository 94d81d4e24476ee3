/**
 * What a route is: whether it needs an agent token, and a handler that
 * returns the reply (or answers by itself, as the Slack receiver does).
 * Route modules export `register…Routes(router, deps)`; adding one is a line
 * in server.ts.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Reply } from "./response.js";
import type { Params, Router } from "./router.js";

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** Decoded `:name` path parameters. */
  params: Params;
  /** Raw query text after "?", "" when there is none. */
  query: string;
  /** Name of the agent token that authenticated; "" on routes without auth. */
  agent: string;
}

export interface Route {
  /** Needs `Authorization: Bearer <token>`, checked before the body is read. */
  auth: boolean;
  /** The reply to send, or undefined when the handler wrote the response itself. */
  handle(ctx: RouteContext): Promise<Reply | undefined>;
}

export type RouteTable = Router<Route>;
