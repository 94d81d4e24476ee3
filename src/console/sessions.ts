/**
 * Who is signed in to the web console (docs/console.md): single-use sign-in
 * links and the sessions they open, kept in the relay's store
 * (src/requests/sign-ins.ts), so any instance on it serves any signed-in
 * person and a sign-out or an expiry holds on all of them. A link's secret
 * and a session's id are 32 random bytes (node:crypto), kept only as their
 * SHA-256, so a lookup leaks nothing through its timing and neither the
 * store nor a memory dump holds a usable secret; nothing else is
 * cryptography here (the cookie is the session id itself, set HttpOnly and
 * SameSite=Strict by ./signin-routes.ts through @fastify/cookie). Each
 * session carries its own CSRF token, compared in constant time.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Answerer } from "../requests/policy.js";
import { signInDigest, type ConsoleRole, type SignInKind, type SignInStore } from "../requests/sign-ins.js";
import { TooManySignInsError } from "../requests/errors.js";

export interface ConsoleSession {
  /** The value of the session cookie. */
  id: string;
  /** Who every answer from this session is checked as. */
  person: Answerer;
  /** `answerer`: may answer as `person`; `viewer` (an admin token): reads every request and the audit log, answers nothing. */
  role: ConsoleRole;
  /** Sent back by the page in X-CSRF-Token on every state-changing call. */
  csrf: string;
  /** Unix ms. */
  expiresAt: number;
}

export interface ConsoleSessionsOptions {
  /** Where links and sessions are kept: the relay's store (memory, or Redis for every instance). */
  store: SignInStore;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** How long a sign-in link may be used (ms); default 10 minutes. */
  linkTtlMs?: number;
  /** How long a session lasts (ms); default 12 hours. */
  sessionTtlMs?: number;
}

/** A new random secret: 32 bytes, base64url. */
export const newSecret = () => randomBytes(32).toString("base64url");

export class ConsoleSessions {
  private readonly store: SignInStore;
  private readonly now: () => number;
  readonly linkTtlMs: number;
  readonly sessionTtlMs: number;

  constructor(options: ConsoleSessionsOptions) {
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.linkTtlMs = options.linkTtlMs ?? 10 * 60_000;
    this.sessionTtlMs = options.sessionTtlMs ?? 12 * 3600_000;
  }

  /** A new single-use sign-in secret for `person`; it goes in the link's fragment, never its query. */
  async newLink(person: Answerer): Promise<string> {
    const value = newSecret();
    const now = this.now();
    kept("link", await this.store.put("link", signInDigest(value), { person, expiresAt: now + this.linkTtlMs }, now));
    return value;
  }

  /** Opens a session for the link's person and uses the link up (on every instance); undefined when it is unknown, used or expired. */
  async redeem(linkSecret: string): Promise<ConsoleSession | undefined> {
    const link = await this.store.take("link", signInDigest(linkSecret), this.now());
    return link ? this.open(link.person, "answerer") : undefined;
  }

  /** Opens a session for a person who proved who they are otherwise (Sign in with Slack, an admin token). */
  async open(person: Answerer, role: ConsoleRole): Promise<ConsoleSession> {
    const now = this.now();
    const session: ConsoleSession = { id: newSecret(), person, role, csrf: newSecret(), expiresAt: now + this.sessionTtlMs };
    const { id, ...entry } = session;
    kept("session", await this.store.put("session", signInDigest(id), entry, now));
    return session;
  }

  /** The live session of this cookie value, or undefined (unknown, ended or expired). */
  async get(id: string | undefined): Promise<ConsoleSession | undefined> {
    if (!id) return undefined;
    const entry = await this.store.get("session", signInDigest(id), this.now());
    return entry && { id, ...entry };
  }

  /** Ends the session on every instance. */
  async end(id: string): Promise<void> {
    await this.store.remove("session", signInDigest(id));
  }
}

/** A put the store refused (it holds as many of the kind as it may): nothing kept, and a 429 that says why. */
function kept(kind: SignInKind, stored: boolean): void {
  if (!stored) throw new TooManySignInsError(kind);
}

/** Whether the X-CSRF-Token sent matches the session's, in constant time. */
export function csrfMatches(session: ConsoleSession, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  return timingSafeEqual(Buffer.from(signInDigest(session.csrf)), Buffer.from(signInDigest(sent)));
}
