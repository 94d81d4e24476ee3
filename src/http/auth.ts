/**
 * Agent authentication: `Authorization: Bearer <token>` against the tokens of
 * the configuration. Every configured token is compared, in constant time,
 * over SHA-256 digests (equal lengths whatever the input), with no early exit,
 * so the response time says nothing about which token or how much matched.
 * Routes that need it take the hook useBearerAuth returns as their
 * `onRequest`: it runs when the request arrives, before a byte of its body is
 * read, and names the token on `request.agent`.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { HttpApp } from "./transport.js";
import type { AgentToken } from "../config.js";
import { RelayError } from "../requests/errors.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Name of the agent token that authenticated; "" on routes without auth. */
    agent: string;
  }
}

/** An `onRequest` hook for the routes that need a token: names it on `request.agent`, or refuses with 401. */
export type AuthHook = (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => void;

export function useBearerAuth(app: HttpApp, tokens: readonly AgentToken[]): AuthHook {
  const authenticate = createAuthenticator(tokens);
  app.decorateRequest("agent", "");
  return (request, _reply, done) => {
    try {
      request.agent = authenticate(request.headers.authorization);
      done();
    } catch (error) {
      done(error as Error);
    }
  };
}

/** Returns the name of the token the header carries; throws relay_unauthorized otherwise. */
export type Authenticate = (authorization: string | undefined) => string;

const BEARER = /^Bearer +([^\s]+) *$/i;
/** Longer than any configured token may be (config allows 512); bounds the hashing work. */
const MAX_TOKEN_LENGTH = 1024;

export function createAuthenticator(tokens: readonly AgentToken[]): Authenticate {
  const known = tokens.map((t) => ({ name: t.name, digest: digest(t.token) }));
  return (authorization) => {
    const match = authorization === undefined ? null : BEARER.exec(authorization);
    const presented = match?.[1];
    if (presented === undefined || presented.length > MAX_TOKEN_LENGTH) throw unauthorized();
    const candidate = digest(presented);
    let name: string | undefined;
    for (const entry of known) {
      if (timingSafeEqual(entry.digest, candidate) && name === undefined) name = entry.name;
    }
    if (name === undefined) throw unauthorized();
    return name;
  };
}

function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

function unauthorized(): RelayError {
  return new RelayError("relay_unauthorized", "Send a relay token as 'Authorization: Bearer <token>'.");
}
