/**
 * The create rate limit per agent token (RELAY_CREATE_RATE_LIMIT creates a
 * minute, on each instance), with @fastify/rate-limit: POST /v1/requests and
 * the Claude Code hook endpoint take `limitCreates` as a preHandler, which
 * runs after authentication named the token, so each token has its own
 * window (keyed by its name, never by address: agents often share one).
 * Past it the call is answered 429 relay_rate_limited with Retry-After (the
 * plugin's headers) and nothing is created; the service counts and audits it.
 * The generous default only stops an agent stuck in a tight loop: the pending
 * cap (RELAY_MAX_PENDING_PER_TOKEN, counted in the store) is what bounds a
 * token over every instance.
 */
import rateLimit from "@fastify/rate-limit";
import type { FastifyReply, FastifyRequest } from "fastify";
import { RelayError } from "../requests/errors.js";
import type { HttpApp } from "./transport.js";

export interface CreateRateLimitOptions {
  /** Creates one token may make per minute on this instance. */
  perMinute: number;
  /** Told of each refused create: the token's name and the HTTP request's id. */
  onLimited: (tokenName: string, reference: string) => void;
}

const WINDOW_MS = 60_000;

/** A preHandler of a route that creates. */
export type CreateLimiter = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

/** Registers the plugin on `app`; returns the preHandler of the routes that create. */
export function useCreateRateLimit(app: HttpApp, { perMinute, onLimited }: CreateRateLimitOptions): CreateLimiter {
  void app.register(rateLimit, { global: false });
  let limiter: CreateLimiter | undefined;
  // The plugin's decorator exists once it has loaded (the app is ready before it serves a call).
  return (request, reply) =>
    (limiter ??= app.rateLimit({
      max: perMinute,
      timeWindow: WINDOW_MS,
      keyGenerator: (limited) => `token:${limited.agent}`,
      onExceeded: (limited) => onLimited(limited.agent, limited.id),
      errorResponseBuilder: (_limited, context) =>
        new RelayError(
          "relay_rate_limited",
          `This agent token made more than ${perMinute} requests in a minute, the most it may; nothing was created. Try again in ${Math.ceil(context.ttl / 1000)} s.`,
          { limitPerMinute: perMinute, retryAfterSeconds: Math.ceil(context.ttl / 1000) },
        ),
    }) as unknown as CreateLimiter)(request, reply);
}
