/**
 * The PeopleDirectory (src/requests/directory.ts) on the bot's WebClient:
 * user group members (usergroups.users.list), user ids by email
 * (users.lookupByEmail) and the relay's own team id (auth.test), each
 * cached so a click is served from memory, and each failing closed with
 * DirectoryUnavailableError when Slack cannot be asked.
 *
 * The cache is per instance, not shared through Redis: a click then costs
 * no store round trip and has no store outage to fail on, the memory store
 * works the same, and each instance holds its own "never older than 60 s"
 * by its own clock. The price is Slack calls: at most one per group in use
 * per instance every ~45 s (entries are refreshed ahead only when read, so
 * idle groups cost nothing), within usergroups.users.list's Tier 2 budget
 * for a few instances and groups; past it, Slack's 429 makes clicks fail
 * closed ("try again") until its Retry-After, during which no call is made.
 *
 * The WebClient has no retries (src/slack/app.ts), so every failure, a 429
 * included, surfaces here at once; each caller waits at most `callTimeoutMs`
 * for Slack, while callers arriving during a call share it.
 */
import { z } from "zod";
import type { Logger } from "../logger.js";
import { SlackUserId } from "../protocol/request-body.js";
import { settleBefore } from "../protocol/timing.js";
import { DirectoryUnavailableError, type PeopleDirectory } from "../requests/directory.js";
import { classifySlackError } from "./retry.js";

/** Oldest group membership ever served (ms), as docs/architecture.md §7 allows. */
export const MEMBERS_MAX_AGE_MS = 60_000;
/** A membership read older than this (ms) is served and refreshed in the background, so the next click finds a fresh one. */
export const MEMBERS_REFRESH_AFTER_MS = 45_000;
/**
 * How long a found email → user id is reused (ms). An address moves to
 * another account only when an admin changes it, and it is resolved once
 * per request create (not per click), so ten minutes saves Tier 3 calls for
 * agents that send many requests for the same person without keeping a
 * reassigned address bound to its old owner for long. "Not found" is never
 * cached: a person just invited is found at once.
 */
export const EMAIL_MAX_AGE_MS = 10 * 60_000;
/** Entries kept per cache; the oldest goes first (emails come from agents, so the caches are bounded). */
const MAX_ENTRIES = 1000;

/** The Web API methods the directory calls; a WebClient has them. */
export interface DirectoryClient {
  usergroups: { users: { list(args: { usergroup: string }): Promise<unknown> } };
  users: { lookupByEmail(args: { email: string }): Promise<unknown> };
  auth: { test(): Promise<unknown> };
}

export interface SlackDirectoryOptions {
  client: DirectoryClient;
  logger: Pick<Logger, "warn">;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** Longest wait for one Web API answer (ms) before Slack counts as unavailable; default 1500. */
  callTimeoutMs?: number;
  /** Team id already known (main asks auth.test at start); asked of Slack on first use otherwise. */
  homeTeamId?: string;
}

const MembersReply = z.object({ users: z.array(z.string().max(64)).max(100_000) });
const LookupReply = z.object({ user: z.object({ id: SlackUserId }) });
const AuthReply = z.object({ team_id: z.string().min(1).max(64) });

interface Entry<T> {
  value: T;
  /** Unix ms at which the call that read it started (the conservative age). */
  at: number;
}

export class SlackPeopleDirectory implements PeopleDirectory {
  private readonly client: DirectoryClient;
  private readonly logger: Pick<Logger, "warn">;
  private readonly now: () => number;
  private readonly callTimeoutMs: number;
  private team: string | undefined;
  private readonly members = new Map<string, Entry<ReadonlySet<string>>>();
  private readonly emails = new Map<string, Entry<string>>();
  private readonly running = new Map<string, Promise<unknown>>();
  /** Per method: Unix ms before which Slack asked not to be called again (429 Retry-After). */
  private readonly blockedUntil = new Map<string, number>();

  constructor({ client, logger, now = Date.now, callTimeoutMs = 1500, homeTeamId }: SlackDirectoryOptions) {
    this.client = client;
    this.logger = logger;
    this.now = now;
    this.callTimeoutMs = callTimeoutMs;
    this.team = homeTeamId;
  }

  async usergroupMembers(usergroupId: string): Promise<ReadonlySet<string>> {
    const entry = this.members.get(usergroupId);
    const age = entry ? this.now() - entry.at : Number.NaN;
    // A clock that went back makes the age negative: such an entry is not trusted either.
    if (entry && age >= 0 && age < MEMBERS_MAX_AGE_MS) {
      if (age >= MEMBERS_REFRESH_AFTER_MS) this.refreshMembers(usergroupId);
      return entry.value;
    }
    return this.bounded("usergroups.users.list", this.fetchMembers(usergroupId));
  }

  async userIdByEmail(email: string): Promise<string | undefined> {
    const key = email.trim().toLowerCase();
    const entry = this.emails.get(key);
    const age = entry ? this.now() - entry.at : Number.NaN;
    if (entry && age >= 0 && age < EMAIL_MAX_AGE_MS) return entry.value;
    return this.bounded("users.lookupByEmail", this.fetchEmail(key, email.trim()));
  }

  /** Undefined while Slack has not said (asked again on the next call); never throws. */
  async homeTeamId(): Promise<string | undefined> {
    if (this.team !== undefined) return this.team;
    try {
      return await this.bounded("auth.test", this.fetchTeam());
    } catch (error) {
      this.logger.warn({ error }, "slack directory: the relay's team id is not known yet");
      return undefined;
    }
  }

  /** Records the team id auth.test gave elsewhere (at start), so no call is needed. */
  knowHomeTeamId(teamId: string): void {
    this.team = teamId;
  }

  private refreshMembers(usergroupId: string): void {
    if (this.running.has(`members:${usergroupId}`) || this.isBlocked("usergroups.users.list")) return;
    this.fetchMembers(usergroupId).catch((error: unknown) => {
      this.logger.warn({ usergroup: usergroupId, error }, "slack directory: refreshing a user group ahead of expiry failed");
    });
  }

  private fetchMembers(usergroupId: string): Promise<ReadonlySet<string>> {
    return this.shared(`members:${usergroupId}`, "usergroups.users.list", async (startedAt) => {
      let members: ReadonlySet<string>;
      try {
        members = new Set(parse(MembersReply, await this.client.usergroups.users.list({ usergroup: usergroupId }), "usergroups.users.list").users);
      } catch (error) {
        // An unknown group, or a disabled one (not listed without include_disabled), has no members.
        if (platformCode(error) !== "no_such_subteam") throw error;
        members = new Set();
      }
      remember(this.members, usergroupId, { value: members, at: startedAt });
      return members;
    });
  }

  private fetchEmail(key: string, email: string): Promise<string | undefined> {
    return this.shared(`email:${key}`, "users.lookupByEmail", async (startedAt) => {
      let reply: unknown;
      try {
        reply = await this.client.users.lookupByEmail({ email });
      } catch (error) {
        if (platformCode(error) === "users_not_found") return undefined;
        throw error;
      }
      const id = parse(LookupReply, reply, "users.lookupByEmail").user.id;
      remember(this.emails, key, { value: id, at: startedAt });
      return id;
    });
  }

  private fetchTeam(): Promise<string> {
    return this.shared("team", "auth.test", async () => {
      const id = parse(AuthReply, await this.client.auth.test(), "auth.test").team_id;
      this.team ??= id;
      return id;
    });
  }

  /**
   * The running call for `key`, or a new one: callers arriving while it runs
   * share it. A failure becomes DirectoryUnavailableError; a 429 also stops
   * calls of `method` until its Retry-After has passed.
   */
  private shared<T>(key: string, method: string, call: (startedAt: number) => Promise<T>): Promise<T> {
    const running = this.running.get(key) as Promise<T> | undefined;
    if (running) return running;
    if (this.isBlocked(method)) return Promise.reject(new DirectoryUnavailableError(`${method}: ratelimited`));
    const task = call(this.now()).catch((error: unknown) => {
      throw this.unavailable(method, error);
    });
    this.running.set(key, task);
    const forget = () => void this.running.delete(key);
    task.then(forget, forget);
    return task;
  }

  private bounded<T>(method: string, task: Promise<T>): Promise<T> {
    return settleBefore(task, { ms: this.callTimeoutMs }, () => {
      throw new DirectoryUnavailableError(`${method}: no answer within ${this.callTimeoutMs} ms`);
    });
  }

  private isBlocked(method: string): boolean {
    return this.now() < (this.blockedUntil.get(method) ?? 0);
  }

  private unavailable(method: string, error: unknown): DirectoryUnavailableError {
    if (error instanceof DirectoryUnavailableError) return error;
    const failure = classifySlackError(error);
    if (failure.kind === "transient" && failure.retryAfterMs !== undefined) this.blockedUntil.set(method, this.now() + failure.retryAfterMs);
    return new DirectoryUnavailableError(`${method}: ${failure.code}`, { cause: error });
  }
}

function parse<T>(schema: z.ZodType<T>, reply: unknown, method: string): T {
  const result = schema.safeParse(reply);
  if (!result.success) throw new DirectoryUnavailableError(`${method}: unexpected reply`);
  return result.data;
}

/** Slack's error code of a platform error (`{ok: false, error}`), else undefined. */
function platformCode(error: unknown): string | undefined {
  const e = (typeof error === "object" && error !== null ? error : {}) as { code?: unknown; data?: { error?: unknown } };
  return e.code === "slack_webapi_platform_error" && typeof e.data?.error === "string" ? e.data.error : undefined;
}

/** Sets `key` as the newest entry, dropping the oldest past MAX_ENTRIES. */
function remember<T>(cache: Map<string, Entry<T>>, key: string, entry: Entry<T>): void {
  cache.delete(key);
  cache.set(key, entry);
  if (cache.size > MAX_ENTRIES) cache.delete(cache.keys().next().value!);
}
