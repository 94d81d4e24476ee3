/**
 * Who is signed in to the web console, kept in the relay's store so that
 * every instance on it serves every signed-in person (docs/console.md): a
 * sign-in link printed by instance A opens a session on B, a session opened
 * on B answers through A, and a sign-out or an expiry on one holds on all.
 * Owned here, implemented by the memory store (one instance) and the Redis
 * store (src/store/memory-sign-ins.ts, redis-sign-ins.ts); the console's
 * sessions (src/console/sessions.ts) and Sign in with Slack use it.
 *
 * Three kinds of entry, each under the SHA-256 of its secret (the store
 * never sees a secret, so neither a key listing nor a memory dump holds a
 * usable one): a single-use sign-in link, a session (with its own CSRF
 * token), and a started Sign in with Slack (its nonce, under its state).
 * Every entry carries its end; times are Unix milliseconds passed in by the
 * caller, so every instance and both stores judge "still alive" alike.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { Person } from "../protocol/request-view.js";

/** The person an entry signs in, placed in their workspace as a Slack click is (policy.ts Answerer). */
const SignedInPerson = Person.extend({ teamId: z.string().optional() });

/** Unix time in milliseconds from which the entry no longer counts. */
const ExpiresAt = z.number().int();

export const ConsoleRole = z.enum(["answerer", "viewer"]);
/** `answerer`: may answer as its person; `viewer` (an admin token): reads every request and the audit log, answers nothing. */
export type ConsoleRole = z.infer<typeof ConsoleRole>;

const SCHEMAS = {
  /** A single-use sign-in link (local mode prints one): who it signs in. */
  link: z.object({ person: SignedInPerson, expiresAt: ExpiresAt }).strict(),
  /** A session: who every call with its cookie is, and the CSRF token its page sends back. */
  session: z.object({ person: SignedInPerson, role: ConsoleRole, csrf: z.string().min(1), expiresAt: ExpiresAt }).strict(),
  /** A started Sign in with Slack: the nonce its ID token must carry. */
  slack: z.object({ nonce: z.string().min(1), expiresAt: ExpiresAt }).strict(),
} as const;

export type SignInKind = keyof typeof SCHEMAS;
export const SIGN_IN_KINDS = Object.keys(SCHEMAS) as SignInKind[];
export type SignInEntry<K extends SignInKind> = z.infer<(typeof SCHEMAS)[K]>;

/** An entry as read back from a store, checked (a trust boundary); throws a ZodError when it does not parse. */
export function parseSignInEntry<K extends SignInKind>(kind: K, value: unknown): SignInEntry<K> {
  return SCHEMAS[kind].parse(value) as SignInEntry<K>;
}

/** Whether the entry still counts at `now` (Unix ms). */
export function signInLives(entry: { expiresAt: number }, now: number): boolean {
  return entry.expiresAt > now;
}

/** The key an entry is kept under: the SHA-256 of its secret, base64url. */
export function signInDigest(secret: string): string {
  return createHash("sha256").update(secret).digest("base64url");
}

/**
 * Most live entries of one kind a store holds, by default, on every
 * instance together (memory or Redis): anyone who reaches the relay may
 * start a Sign in with Slack, and must not fill its memory or Redis.
 */
export const MAX_SIGN_INS_PER_KIND = 10_000;

export interface SignInStore {
  /**
   * Keeps `entry` under `digest` (signInDigest of its secret) until its
   * `expiresAt`. False when the store already holds as many live entries of
   * this kind as it may (its `maxPerKind`, by default MAX_SIGN_INS_PER_KIND;
   * the same digest again replaces its entry and is not counted twice), and
   * then nothing is kept.
   */
  put<K extends SignInKind>(kind: K, digest: string, entry: SignInEntry<K>, now: number): Promise<boolean>;
  /** The live entry, or undefined (unknown, removed, or past its time at `now`). */
  get<K extends SignInKind>(kind: K, digest: string, now: number): Promise<SignInEntry<K> | undefined>;
  /** The live entry, removed in the same step: of callers at once (on any instance), one gets it; undefined for the others. */
  take<K extends SignInKind>(kind: K, digest: string, now: number): Promise<SignInEntry<K> | undefined>;
  /** Removes the entry, for every instance (a sign-out). */
  remove(kind: SignInKind, digest: string): Promise<void>;
  close(): Promise<void>;
}
