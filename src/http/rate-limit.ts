/**
 * The create rate limit per agent token (RELAY_CREATE_RATE_LIMIT creates a
 * minute, on each instance), with @fastify/rate-limit: one counter per token
 * (keyed by its name, never by address: agents often share one), shared by
 * every way to create. POST /v1/requests and the Claude Code hook endpoint
 * take `preHandler`, which runs after authentication named the token; POST
 * /mcp calls `check` for each tool call that creates (approve, ask_user), so
 * MCP agents count against the same window. Past it a create is refused with
 * RateLimitedError (429 relay_rate_limited with Retry-After over HTTP, a deny
 * to a hook call, a tool error or a deny over MCP) and nothing is created;
 * the service counts and audits it. The generous default only stops an agent
 * stuck in a tight loop: the pending cap (RELAY_MAX_PENDING_PER_TOKEN,
 * counted in the store) is what bounds a token over every instance.
 */
import rateLimit from "@fastify/rate-limit";
import type { FastifyReply, FastifyRequest } from "fastify";
import { RateLimitedError } from "../requests/errors.js";
import type { HttpApp } from "./transport.js";

export interface CreateRateLimitOptions {
  /** Creates one token may make per minute on this instance. */
  perMinute: number;
  /** Told of each refused create: the token's name and the HTTP request's id. */
  onLimited: (tokenName: string, reference: string) => void;
}

const WINDOW_MS = 60_000;

/** A preHandler of an HTTP route that creates. */
export type CreateLimiter = (request: FastifyRequest, reply: FastifyReply) => Promise<void>;

type LimitCheck = ReturnType<HttpApp["createRateLimit"]>;

/** One token's create window, for every route that creates. */
export class CreateRateLimit {
  private limit: LimitCheck | undefined;

  /** Registers the plugin on `app` (its decorator exists once the app is ready, before it serves a call). */
  constructor(
    private readonly app: HttpApp,
    private readonly options: CreateRateLimitOptions,
  ) {
    void app.register(rateLimit, { global: false });
  }

  /** Counts one create by the request's agent token; throws RateLimitedError past the limit. */
  async check(request: FastifyRequest): Promise<void> {
    const { perMinute, onLimited } = this.options;
    this.limit ??= this.app.createRateLimit({ max: perMinute, timeWindow: WINDOW_MS, keyGenerator: (limited) => `token:${limited.agent}` });
    const result = await this.limit(request);
    if (result.isAllowed || !result.isExceeded) return;
    onLimited(request.agent, request.id);
    throw new RateLimitedError(perMinute, Math.max(1, Math.ceil(result.ttl / 1000)));
  }

  /** The preHandler of an HTTP route that creates. */
  readonly preHandler: CreateLimiter = (request) => this.check(request);
}
