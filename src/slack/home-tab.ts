/**
 * The App Home tab's life on one instance: what a person's view shows
 * (./blocks/home.ts builds it), and when it is published (views.publish):
 * when they open the tab, after a Revoke click there, and after they
 * answer a request anywhere, but only if they opened the tab within
 * HOME_RECENT_MS (a per-instance set): the relay never publishes for
 * everyone who clicks.
 *
 * The work is bounded because opens are frequent: one listing of the
 * newest HOME_LIMITS.scanned pending requests and one of the person's
 * rules per view, "may they answer" served from the people directory's
 * caches, links built without a call (./permalinks.ts). A person has at
 * most one view being built (one more asked for meanwhile runs once after
 * it), MAX_BUILDING are built at a time, MAX_QUEUED wait, and a reopen
 * within HOME_REOPEN_MS keeps the view just published. Every publish takes
 * its turn in the ChannelQueue's views.publish line, which waits out a 429.
 * It is all side work: callers never wait for it, and failures are logged,
 * never thrown.
 */
import type { HomeView } from "@slack/types";
import type { Logger } from "../logger.js";
import { SlackUserId } from "../protocol/request-body.js";
import type { RequestRecord } from "../requests/model.js";
import { approversAt, type Answerer } from "../requests/policy.js";
import type { RequestService } from "../requests/service.js";
import { HOME_LIMITS, homeView, type HomeContent, type HomeRules, type HomeWaiting } from "./blocks/index.js";
import { queueKey, type ChannelQueue } from "./channel-queue.js";
import { pacedCall } from "./paced.js";
import type { MessageLinks } from "./permalinks.js";

/** How long after opening the tab a person's answers elsewhere refresh it (ms). */
export const HOME_RECENT_MS = 15 * 60_000;
/** A reopen this soon after the person's view was published keeps that view (ms). */
export const HOME_REOPEN_MS = 5_000;
/** People remembered as having opened the tab; the longest ago is forgotten first. */
const MAX_RECENT = 1000;
const MAX_BUILDING = 4;
const MAX_QUEUED = 200;
/** Longest a publish waits for its turn (a 429's pause) before it is given up (ms). */
const TURN_WAIT_MS = 10_000;

export interface HomeClient {
  views: { publish(args: { user_id: string; view: HomeView }): Promise<unknown> };
}

export interface HomeTabDeps {
  service: Pick<RequestService, "listPending" | "refusalFor" | "rules">;
  client: HomeClient;
  links: Pick<MessageLinks, "linker">;
  queue: ChannelQueue;
  logger: Logger;
  /** Unix time in milliseconds. */
  now: () => number;
}

interface Seen {
  person: Answerer;
  openedAt: number;
  shownAt?: number;
}

interface Job {
  person: Answerer;
  notice?: string;
  running: boolean;
  /** Asked for again while running: built once more after. */
  again: boolean;
}

export class HomeTab {
  private readonly seen = new Map<string, Seen>();
  private readonly jobs = new Map<string, Job>();
  private readonly queued: string[] = [];
  private readonly tasks = new Set<Promise<void>>();

  constructor(private readonly deps: HomeTabDeps) {}

  /** The person opened the Home tab: their view is published, unless it just was. */
  opened(person: Answerer): void {
    const now = this.deps.now();
    const before = this.seen.get(person.id);
    this.remember(person, now, before?.shownAt);
    if (before?.shownAt !== undefined && now - before.shownAt >= 0 && now - before.shownAt < HOME_REOPEN_MS) return;
    this.schedule(person);
  }

  /** The person answered a request (or gave it more time) somewhere: their view is refreshed if they opened the tab lately. */
  acted(userId: string): void {
    const seen = this.seen.get(userId);
    const age = seen ? this.deps.now() - seen.openedAt : Number.NaN;
    if (seen && age >= 0 && age < HOME_RECENT_MS) this.schedule(seen.person);
  }

  /** Publishes the person's view now (after a click in it), with `notice` on top. */
  show(person: Answerer, notice?: string): void {
    this.remember(person, this.deps.now(), this.seen.get(person.id)?.shownAt);
    this.schedule(person, notice);
  }

  /** Resolves once every view asked for so far has been published or given up. */
  async idle(): Promise<void> {
    while (this.tasks.size > 0) await Promise.all([...this.tasks]);
  }

  /** What the person's view shows now; never throws (a part that cannot be read says so). */
  async content(person: Answerer, notice?: string): Promise<HomeContent> {
    const now = this.deps.now();
    const [waiting, rules, linker] = await Promise.all([this.waiting(person, now), this.rules(person.id), this.deps.links.linker()]);
    if (linker && waiting !== "unavailable") for (const item of waiting.shown) item.permalink = linker(item.record.slack!);
    if (linker && typeof rules === "object") {
      const links = new Map<string, string>();
      for (const rule of rules.shown) {
        const link = rule.message && linker(rule.message);
        if (link) links.set(rule.id, link);
      }
      rules.permalinks = links;
    }
    return { now, waiting, rules, ...(notice === undefined ? {} : { notice }) };
  }

  private async waiting(person: Answerer, now: number): Promise<HomeWaiting | "unavailable"> {
    let pending: RequestRecord[];
    try {
      pending = await this.deps.service.listPending(HOME_LIMITS.scanned);
    } catch (error) {
      this.deps.logger.warn({ error }, "slack home tab: pending requests could not be listed");
      return "unavailable";
    }
    const candidates = pending.filter((record) => record.slack !== undefined && record.expiresAt > now && waitsOn(record, person.id, now));
    const refusals = await Promise.all(
      candidates.map((record) => this.deps.service.refusalFor(record, person).catch(() => ({ reason: "unverified" as const }))),
    );
    const mine = candidates.filter((_, i) => refusals[i] === undefined);
    const shown = mine.slice(0, HOME_LIMITS.requests).map((record) => ({ record }));
    const unchecked = refusals.filter((refusal) => refusal?.reason === "unverified").length;
    return { shown, more: mine.length - shown.length, moreUncounted: pending.length >= HOME_LIMITS.scanned, unchecked };
  }

  private async rules(userId: string): Promise<HomeRules | "unavailable" | "none"> {
    const book = this.deps.service.rules;
    if (!book) return "none";
    try {
      const rules = await book.list({ createdBy: userId, limit: HOME_LIMITS.rules + 1 });
      return { shown: rules.slice(0, HOME_LIMITS.rules), more: rules.length > HOME_LIMITS.rules };
    } catch (error) {
      this.deps.logger.warn({ error }, "slack home tab: rules could not be listed");
      return "unavailable";
    }
  }

  private remember(person: Answerer, openedAt: number, shownAt: number | undefined): void {
    this.seen.delete(person.id);
    this.seen.set(person.id, shownAt === undefined ? { person, openedAt } : { person, openedAt, shownAt });
    if (this.seen.size > MAX_RECENT) this.seen.delete(this.seen.keys().next().value!);
  }

  private schedule(person: Answerer, notice?: string): void {
    const job = this.jobs.get(person.id);
    if (job) {
      job.person = person;
      if (notice !== undefined) job.notice = notice;
      if (job.running) job.again = true;
      return;
    }
    if (this.queued.length >= MAX_QUEUED) return void this.deps.logger.warn({ user: person.id }, "slack home tab: too many views waiting, this one is skipped");
    this.jobs.set(person.id, { person, running: false, again: false, ...(notice === undefined ? {} : { notice }) });
    this.queued.push(person.id);
    this.pump();
  }

  private pump(): void {
    while (this.tasks.size < MAX_BUILDING && this.queued.length > 0) {
      const job = this.jobs.get(this.queued.shift()!)!;
      job.running = true;
      const task: Promise<void> = this.publish(job).finally(() => {
        this.tasks.delete(task);
        job.running = false;
        if (job.again) {
          job.again = false;
          this.queued.push(job.person.id);
        } else {
          this.jobs.delete(job.person.id);
        }
        this.pump();
      });
      this.tasks.add(task);
    }
  }

  private async publish(job: Job): Promise<void> {
    const { person } = job;
    try {
      const view = homeView(await this.content(person, job.notice));
      const { queue, client, now } = this.deps;
      await pacedCall(queue, queueKey("views.publish"), now() + TURN_WAIT_MS, () => client.views.publish({ user_id: person.id, view }));
      const seen = this.seen.get(person.id);
      if (seen) seen.shownAt = now();
    } catch (error) {
      this.deps.logger.warn({ user: person.id, error }, "slack home tab not published");
    }
  }
}

/**
 * Whether the request may wait on this person at all, before asking who may
 * answer: not when their approval is already counted; a request sent to a
 * person directly (its channel is their user id) only ever on them; and a
 * request in a channel only when its approvers are named (by id or group).
 * Under `approvers: any` anyone may answer, but the relay cannot tell who
 * reads the channel (a private one, say): listing it for everyone would show
 * what is asked there to people outside it, so it is left to the channel.
 */
function waitsOn(record: RequestRecord, userId: string, now: number): boolean {
  if (record.approvals?.some((approval) => approval.person.id === userId)) return false;
  if (SlackUserId.safeParse(record.channel).success) return record.channel === userId;
  return approversAt(record, now) !== undefined;
}
