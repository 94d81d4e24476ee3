/**
 * The soak's verdict: reads a recorded history (./history.ts) and lists every
 * broken promise. Pure, so it is tested on histories with a violation
 * planted in each (test/unit/bench/soak-checker.test.ts) and then trusted on
 * real runs. The promises, one rule each:
 *   deadline  every request ended by its deadline plus the grace (plus the
 *             Redis outages and the times no relay was up from its deadline
 *             on: nothing can end while they last);
 *   decision  every agent got exactly what the relay recorded, and what was
 *             recorded is what its person gave (or an expiry nobody answered);
 *   click     every click, modal submission and thread reply was recorded or
 *             its person told (an error reply, a modal error, an ephemeral);
 *   messages  no request ever had two live messages, and none is left live
 *             once its request ended;
 *   callback  every callback request's receiver got its final state, signed;
 *   resources memory and file descriptors of each long-lived relay process
 *             flat: late readings no higher than early ones beyond a margin.
 */
import { isDeepStrictEqual } from "node:util";
import type { Click, SoakHistory, SoakRequest } from "./history.js";

export type Rule = "deadline" | "decision" | "click" | "messages" | "callback" | "resources";

export interface Violation {
  rule: Rule;
  /** The request's marker (or the process life, for resources). */
  subject: string;
  detail: string;
}

/** A process life shorter than this says nothing about growth. */
export const MIN_LIFE_MS = 90_000;
/** Readings this early in a life are warm-up (JIT, pools filling). */
const WARMUP_MS = 20_000;
/** Late median may exceed the early one by this factor plus this many units. */
const GROWTH = { fds: [1.25, 12], heapUsedBytes: [1.5, 12 * 2 ** 20], rssBytes: [1.4, 32 * 2 ** 20] } as const;

export function check(history: SoakHistory): Violation[] {
  return [
    ...history.requests.flatMap((request) => [...deadlineRule(history, request), ...decisionRule(request), ...callbackRule(history, request)]),
    ...clickRule(history),
    ...messageRule(history),
    ...resourceRule(history),
  ];
}

/** When the request ended as far as anyone can tell: the agent's answer, else the relay's answeredAt. */
function endedAt(request: SoakRequest): number | undefined {
  if (request.agent && !["lost", "refused"].includes(request.agent.status)) return request.agent.at;
  return request.final?.answeredAt;
}

function deadlineRule(history: SoakHistory, request: SoakRequest): Violation[] {
  const at = (detail: string): Violation[] => [{ rule: "deadline", subject: request.marker, detail }];
  if (request.final?.status === "pending") return at(`still pending when the run ended (deadline ${iso(request.deadline)})`);
  const end = endedAt(request);
  if (end === undefined) return [];
  const allowed = allowance(history, request.deadline);
  if (end > allowed) return at(`ended ${end - request.deadline} ms after its deadline (allowed ${allowed - request.deadline} ms)`);
  return [];
}

/**
 * The latest a request due at `deadline` may end: the grace, plus the time Redis was down or no relay was
 * up from the deadline on, while the request had not yet had its chance (nothing can end while either lasts).
 */
function allowance(history: SoakHistory, deadline: number): number {
  let allowed = deadline + history.graceMs;
  const outages = history.faults.filter((f) => f.kind === "redis-restart" || f.kind === "all-down").sort((a, b) => a.from - b.from);
  for (const outage of outages) {
    if (outage.from <= allowed && outage.to >= deadline) allowed += outage.to - Math.max(outage.from, deadline);
  }
  return allowed;
}

function decisionRule(request: SoakRequest): Violation[] {
  const out = (detail: string): Violation[] => [{ rule: "decision", subject: request.marker, detail }];
  const { agent, final, person } = request;
  if (!agent) return out("the agent never got an answer");
  if (agent.status === "lost") return request.via === "hook" ? [] : out(`the agent's ${request.via} broke without an answer: ${agent.detail ?? ""}`);
  if (agent.status === "refused") return final && final.status !== "cancelled" ? out(`the agent was refused but the relay holds it ${final.status}`) : [];
  if (!final) return out("the relay's final state was not read");
  if (agent.status === "denied") {
    return final.status === "answered" || final.status === "pending"
      ? out(`the hook was denied unanswered but the relay holds it ${show(final.status, final.decision)}`)
      : [];
  }
  if (agent.status !== final.status || !isDeepStrictEqual(agent.decision, final.decision)) {
    return out(`the agent got ${show(agent.status, agent.decision)} but the relay recorded ${show(final.status, final.decision)}`);
  }
  if (final.status !== "answered") return [];
  if (!person) return out(`answered by ${final.answeredBy ?? "?"} though nobody was to answer`);
  if (final.answeredBy !== person.user) return out(`answered by ${final.answeredBy ?? "?"}, not by its person ${person.user}`);
  if (!isDeepStrictEqual(final.decision, person.expected))
    return out(`recorded ${show("answered", final.decision)}; the person gave ${JSON.stringify(person.expected)}`);
  return [];
}

function callbackRule(history: SoakHistory, request: SoakRequest): Violation[] {
  if (request.via !== "callback" || !request.id || !request.final || request.final.status === "pending") return [];
  const final = request.final;
  const deliveries = history.callbacks.filter((d) => d.requestId === request.id);
  const out = (detail: string): Violation[] => [{ rule: "callback", subject: request.marker, detail }];
  if (deliveries.length === 0) return out(`no callback arrived for ${request.id} (${final.status})`);
  const wrong = deliveries.find((d) => !d.signatureOk || d.status !== final.status || !isDeepStrictEqual(d.decision, final.decision));
  if (wrong)
    return out(
      `a callback said ${show(wrong.status, wrong.decision)}${wrong.signatureOk ? "" : " with a bad signature"}; the relay holds ${show(final.status, final.decision)}`,
    );
  return [];
}

function clickRule(history: SoakHistory): Violation[] {
  const byMarker = new Map(history.requests.map((r) => [r.marker, r]));
  const violations: Violation[] = [];
  for (const clicks of groupBy(history.clicks, (c) => `${c.marker} ${c.user}`).values()) {
    clicks.sort((a, b) => a.at - b.at);
    clicks.forEach((click, i) => {
      const until = clicks[i + 1]?.at ?? Infinity;
      const request = byMarker.get(click.marker);
      if (told(history, click, until) || recorded(history, click, request, until)) return;
      if (click.how === "thread" && request && writtenAfterTheEnd(request, click)) return;
      violations.push({
        rule: "click",
        subject: click.marker,
        detail: `${click.how} by ${click.user} at ${iso(click.at)} (HTTP ${click.status}) was neither recorded nor told`,
      });
    });
  }
  return violations;
}

/**
 * A thread reply written once its request had ended is ignored silently, by design (src/slack/listeners/messages.ts:
 * a thread is a conversation, and the message says how it ended): after the answer was recorded (a person who
 * repeats their own reply because a Slack fault delays the message's update included), after the deadline of one
 * that expired, after the agent heard the end of another.
 */
function writtenAfterTheEnd(request: SoakRequest, click: Click): boolean {
  const status = request.final?.status;
  if (status === undefined || status === "pending") return false;
  if (status === "answered") return request.final!.answeredAt !== undefined && click.at > request.final!.answeredAt;
  const end = endedAt(request) ?? Infinity;
  return click.at >= (status === "expired" ? Math.min(request.deadline, end) : end);
}

/** An error reply, a modal kept open with an error, or an ephemeral to the person before their next try. */
function told(history: SoakHistory, click: Click, until: number): boolean {
  if (click.status < 200 || click.status >= 300 || click.modalError) return true;
  return history.notices.some((n) => n.user === click.user && n.at >= click.at && n.at < until);
}

/** The click's effect landed: its request was answered by this person meanwhile, or (an open) the modal was asked for. */
function recorded(history: SoakHistory, click: Click, request: SoakRequest | undefined, until: number): boolean {
  if (click.how === "open") return history.opens.some((o) => o.triggerId === click.triggerId);
  const final = request?.final;
  if (!final || final.status !== "answered" || final.answeredBy !== click.user || final.answeredAt === undefined) return false;
  return final.answeredAt >= click.at - 1000 && final.answeredAt < until;
}

function messageRule(history: SoakHistory): Violation[] {
  const violations: Violation[] = [];
  const ended = new Map(history.requests.filter((r) => r.id && r.final && r.final.status !== "pending").map((r) => [r.id!, r]));
  const lives = groupBy(history.messages, (m) => m.requestId);
  for (const [id, messages] of lives) {
    const request = ended.get(id);
    const subject = request?.marker ?? id;
    for (let i = 0; i < messages.length; i += 1) {
      for (let j = i + 1; j < messages.length; j += 1) {
        const [a, b] = [messages[i]!, messages[j]!];
        if (a.postedAt < (b.endedAt ?? Infinity) && b.postedAt < (a.endedAt ?? Infinity)) {
          violations.push({ rule: "messages", subject, detail: `two live messages for ${id}: ${a.channel}/${a.ts} and ${b.channel}/${b.ts}` });
        }
      }
    }
    const stale = request && messages.find((m) => m.endedAt === undefined);
    if (stale)
      violations.push({ rule: "messages", subject, detail: `${stale.channel}/${stale.ts} still has its buttons; the request is ${request.final!.status}` });
  }
  return violations;
}

export interface LifeGrowth {
  life: string;
  minutes: number;
  early: Record<keyof typeof GROWTH, number>;
  late: Record<keyof typeof GROWTH, number>;
}

/** Early (first quarter after warm-up) and late (last quarter) medians of each process life long enough to judge. */
export function growth(history: SoakHistory): LifeGrowth[] {
  const result: LifeGrowth[] = [];
  for (const [life, samples] of groupBy(history.samples, (s) => s.life)) {
    const start = samples[0]!.at;
    const warm = samples.filter((s) => s.at - start >= WARMUP_MS);
    const span = (warm.at(-1)?.at ?? start) - start;
    if (span < MIN_LIFE_MS || warm.length < 8) continue;
    const quarter = Math.floor(warm.length / 4);
    const median = (values: number[]) => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const of = (part: typeof warm) => ({
      fds: median(part.map((s) => s.fds)),
      heapUsedBytes: median(part.map((s) => s.heapUsedBytes)),
      rssBytes: median(part.map((s) => s.rssBytes)),
    });
    result.push({ life, minutes: span / 60_000, early: of(warm.slice(0, quarter)), late: of(warm.slice(-quarter)) });
  }
  return result;
}

function resourceRule(history: SoakHistory): Violation[] {
  return growth(history).flatMap(({ life, early, late }) =>
    (Object.keys(GROWTH) as Array<keyof typeof GROWTH>)
      .filter((key) => late[key] > early[key] * GROWTH[key][0] + GROWTH[key][1])
      .map((key) => ({ rule: "resources" as const, subject: life, detail: `${key} grew from ${early[key]} to ${late[key]}` })),
  );
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

function show(status: string, decision: unknown): string {
  return decision === undefined ? status : `${status} ${JSON.stringify(decision)}`;
}

function iso(ms: number): string {
  return new Date(ms).toISOString().slice(11, 23);
}
