/**
 * Who is signed in to the web console (docs/console.md): single-use sign-in
 * links and the sessions they open, in this instance's memory. A link's
 * secret and a session's id are 32 random bytes (node:crypto), kept only as
 * their SHA-256, so a lookup leaks nothing through its timing and a memory
 * dump holds no usable secret; nothing else is cryptography here (the
 * cookie is the session id itself, set HttpOnly and SameSite=Strict by
 * ./routes.ts through @fastify/cookie). Each session carries its own CSRF
 * token, compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Answerer } from "../requests/policy.js";

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

export type ConsoleRole = "answerer" | "viewer";

export interface ConsoleSessionsOptions {
  /** Unix time in milliseconds. */
  now?: () => number;
  /** How long a sign-in link may be used (ms); default 10 minutes. */
  linkTtlMs?: number;
  /** How long a session lasts (ms); default 12 hours. */
  sessionTtlMs?: number;
}

const secret = () => randomBytes(32).toString("base64url");
const digest = (value: string) => createHash("sha256").update(value).digest("base64url");

export class ConsoleSessions {
  private readonly links = new Map<string, { person: Answerer; expiresAt: number }>();
  private readonly sessions = new Map<string, ConsoleSession>();
  private readonly now: () => number;
  readonly linkTtlMs: number;
  readonly sessionTtlMs: number;

  constructor(options: ConsoleSessionsOptions = {}) {
    this.now = options.now ?? Date.now;
    this.linkTtlMs = options.linkTtlMs ?? 10 * 60_000;
    this.sessionTtlMs = options.sessionTtlMs ?? 12 * 3600_000;
  }

  /** A new single-use sign-in secret for `person`; it goes in the link's fragment, never its query. */
  newLink(person: Answerer): string {
    this.prune();
    const value = secret();
    this.links.set(digest(value), { person, expiresAt: this.now() + this.linkTtlMs });
    return value;
  }

  /** Opens a session for the link's person and uses the link up; undefined when it is unknown, used or expired. */
  redeem(linkSecret: string): ConsoleSession | undefined {
    const key = digest(linkSecret);
    const link = this.links.get(key);
    this.links.delete(key);
    if (!link || link.expiresAt <= this.now()) return undefined;
    return this.open(link.person, "answerer");
  }

  /** Opens a session for a person who proved who they are otherwise (Sign in with Slack, an admin token). */
  open(person: Answerer, role: ConsoleRole): ConsoleSession {
    this.prune();
    const session: ConsoleSession = { id: secret(), person, role, csrf: secret(), expiresAt: this.now() + this.sessionTtlMs };
    this.sessions.set(digest(session.id), session);
    return session;
  }

  /** The live session of this cookie value, or undefined (unknown, ended or expired). */
  get(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const key = digest(id);
    const session = this.sessions.get(key);
    if (session && session.expiresAt <= this.now()) this.sessions.delete(key);
    return session && session.expiresAt > this.now() ? session : undefined;
  }

  end(id: string): void {
    this.sessions.delete(digest(id));
  }

  private prune(): void {
    const now = this.now();
    for (const [key, link] of this.links) if (link.expiresAt <= now) this.links.delete(key);
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
  }
}

/** Whether the X-CSRF-Token sent matches the session's, in constant time. */
export function csrfMatches(session: ConsoleSession, sent: string | undefined): boolean {
  if (sent === undefined) return false;
  const a = Buffer.from(digest(session.csrf));
  const b = Buffer.from(digest(sent));
  return timingSafeEqual(a, b);
}
