/**
 * Authentication: `Authorization: Bearer <token>` against the tokens of the
 * configuration, agent tokens (RELAY_TOKENS) and admin tokens
 * (RELAY_ADMIN_TOKENS) alike. Every configured token is compared, in
 * constant time, over SHA-256 digests (equal lengths whatever the input),
 * with no early exit, so the response time says nothing about which token,
 * which kind of token, or how much matched.
 *
 * Routes take one of the hooks useBearerAuth returns as their `onRequest`,
 * by who may call them: it runs when the request arrives, before a byte of
 * its body is read, names the token on `request.agent` and its role on
 * `request.tokenRole`, and refuses with 401 (no or unknown token) or 403
 * (the other role's token). Admin tokens are read-only operator tokens: they
 * read the audit and every request, and never create, cancel or hold a hook
 * call (they may revoke an "Allow for a while" rule, which only takes a
 * permission away); agent tokens never read the audit.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { HttpApp } from "./transport.js";
import type { AgentToken } from "../config/config.js";
import type { TokenRole } from "../requests/vocabulary.js";
import { RelayError } from "../requests/errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Name of the token that authenticated (an agent's or an admin's); "" on routes without auth. */
    agent: string;
    /** Role of that token; "" on routes without auth. */
    tokenRole: TokenRole | "";
  }
}

/** An `onRequest` hook for the routes that need a token: names it on the request, or refuses (401, 403). */
export type AuthHook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

/** The hooks by who may call a route. */
export interface AuthHooks {
  /** Agent tokens only: creating, cancelling, the hook endpoint. */
  agent: AuthHook;
  /** Admin tokens only: the audit. */
  admin: AuthHook;
  /** Either: reading and listing requests. */
  any: AuthHook;
}

export interface ConfiguredTokens {
  agents: readonly AgentToken[];
  admins: readonly AgentToken[];
}

export function useBearerAuth(app: HttpApp, tokens: ConfiguredTokens): AuthHooks {
  const authenticate = createAuthenticator(tokens);
  app.decorateRequest("agent", "");
  app.decorateRequest("tokenRole", "");
  const hook =
    (allowed: TokenRole | "any"): AuthHook =>
    (request, _reply, done) => {
      try {
        const caller = authenticate(request.headers.authorization);
        if (allowed !== "any" && caller.role !== allowed) throw forbidden(allowed);
        request.agent = caller.name;
        request.tokenRole = caller.role;
        done();
      } catch (error) {
        done(error as Error);
      }
    };
  return { agent: hook("agent"), admin: hook("admin"), any: hook("any") };
}

/** Who a token belongs to. */
export interface Caller {
  name: string;
  role: TokenRole;
}

/** Returns who the token the header carries belongs to; throws relay_unauthorized otherwise. */
export type Authenticate = (authorization: string | undefined) => Caller;

const BEARER = /^Bearer +([^\s]+) *$/i;
/** Longer than any configured token may be (config allows 512); bounds the hashing work. */
const MAX_TOKEN_LENGTH = 1024;

export function createAuthenticator({ agents, admins }: ConfiguredTokens): Authenticate {
  const known = [
    ...agents.map((t) => ({ caller: { name: t.name, role: "agent" as const }, digest: digest(t.token) })),
    ...admins.map((t) => ({ caller: { name: t.name, role: "admin" as const }, digest: digest(t.token) })),
  ];
  return (authorization) => {
    const candidate = presentedDigest(authorization);
    if (candidate === undefined) throw unauthorized();
    let caller: Caller | undefined;
    for (const entry of known) {
      if (timingSafeEqual(entry.digest, candidate) && caller === undefined) caller = entry.caller;
    }
    if (caller === undefined) throw unauthorized();
    return caller;
  };
}

/**
 * Whether the header carries `token`, compared as the relay's tokens are (in
 * constant time, over digests): for a route with a token of its own
 * (METRICS_TOKEN).
 */
export function createTokenCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    const candidate = presentedDigest(authorization);
    return candidate !== undefined && timingSafeEqual(expected, candidate);
  };
}

/** The digest of the token a well-formed `Bearer` header presents; undefined for none or one longer than any token. */
function presentedDigest(authorization: string | undefined): Buffer | undefined {
  const presented = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
  return presented === undefined || presented.length > MAX_TOKEN_LENGTH ? undefined : digest(presented);
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

function unauthorized(): RelayError {
  return new RelayError("relay_unauthorized", "Send a relay token as 'Authorization: Bearer <token>'.");
}

function forbidden(needed: TokenRole): RelayError {
  return needed === "agent"
    ? new RelayError(
        "relay_forbidden",
        "Admin tokens (RELAY_ADMIN_TOKENS) are read-only: creating or cancelling a request and the hook endpoint take an agent token (RELAY_TOKENS).",
      )
    : new RelayError("relay_forbidden", "This route takes an admin token (RELAY_ADMIN_TOKENS); agent tokens may not read the audit.");
}
