/**
 * Replies in a request message's thread. A step gate takes y / yes / n / no /
 * q; an AskUserQuestion takes any text as a free-form answer. Everything
 * else (chatter, bots, edits, replies to ended requests) is ignored silently:
 * a thread is a conversation, and only a clear answer may change state.
 *
 * Slack's Events API is acked before listeners run, so nothing can be held
 * back while the store is slow or down; instead the store gets the same
 * budget as a click, and past it (or on a store error) the person gets an
 * ephemeral in the thread saying their reply was not recorded.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { Decision, StepReply } from "../../protocol/decisions.js";
import type { RequestRecord } from "../../requests/model.js";
import { answererIn } from "../../requests/policy.js";
import { NOT_RECORDED_REPLY, STORE_BUDGET, withinBudget, type Bounded, type ListenerDeps } from "./context.js";
import { endedNotice, reportOutcome, tellPerson } from "./notices.js";

/** A plain message from a person, in a thread. Anything else does not parse. */
const ThreadReply = z.looseObject({
  type: z.literal("message"),
  subtype: z.never().optional(),
  bot_id: z.never().optional(),
  user: z.string().min(1),
  /** The person's own workspace (Slack Connect guests), when Slack says. */
  user_team: z.string().optional(),
  /** The workspace the message was sent from: the person's own, where `user_team` is missing. */
  team: z.string().optional(),
  channel: z.string().min(1),
  ts: z.string().min(1),
  thread_ts: z.string().min(1),
  text: z.string(),
});

const STEP_REPLIES: Record<string, StepReply> = { y: "y", yes: "y", n: "n", no: "n", q: "q" };

/** y / yes / n / no / q, trimmed and case-insensitive; anything else is no answer (never "no"). */
export function parseStepReply(text: string): StepReply | undefined {
  return STEP_REPLIES[text.trim().toLowerCase()];
}

/** The decision a thread reply makes for this request, if it makes one. */
export function parseThreadReply(record: RequestRecord, text: string): Decision | undefined {
  const body = record.body;
  if (body.kind === "step_gate") {
    const reply = parseStepReply(text);
    return reply && { reply };
  }
  if (body.kind === "ask_user_question") {
    const answer = text.trim();
    if (answer === "") return undefined;
    return { answers: Object.fromEntries(body.questions.map((q) => [q.question, answer])), response: answer };
  }
  return undefined;
}

export function register(app: App, deps: ListenerDeps): void {
  app.event("message", async ({ event }) => {
    try {
      await handleReply(deps, event);
    } catch (error) {
      deps.logger.error({ error }, "slack thread reply failed");
    }
  });
}

/** Handles one message event; exported for tests of what the person hears when the store fails. */
export async function handleReply(deps: ListenerDeps, raw: unknown): Promise<void> {
  const started = performance.now();
  const parsed = ThreadReply.safeParse(raw);
  if (!parsed.success || parsed.data.thread_ts === parsed.data.ts) return;
  const message = parsed.data;
  const read = await withinBudget(deps.service.findBySlackMessage({ channel: message.channel, ts: message.thread_ts }), STORE_BUDGET.readMs);
  if (!read.ok) return notRecorded(deps, message, read);
  const record = read.value;
  if (!record) return;
  if (record.status !== "pending") return tellIfOvertaken(deps, message, record);
  const decision = parseThreadReply(record, message.text);
  if (!decision) return deps.logger.debug({ id: record.id }, "slack thread reply ignored");
  const left = STORE_BUDGET.totalMs - (performance.now() - started);
  const answerer = answererIn({ id: message.user }, message.user_team ?? message.team);
  const answered = await withinBudget(deps.service.answer(record.id, decision, answerer, record), left);
  if (!answered.ok) return notRecorded(deps, message, answered, record.id);
  deps.logger.debug({ id: record.id, outcome: answered.value.outcome }, "slack thread reply recorded");
  // Refused, counted or already counted: only that person is told, next to their reply.
  await reportOutcome(deps, answered.value, { channel: message.channel, user: message.user, threadTs: message.thread_ts });
}

/**
 * An answer written while the request was still pending that reached the
 * relay only after it ended (another answer, its deadline, a cancel won the
 * race): the person is told in the thread how it ended, as a click that
 * comes too late is. A reply written after the end stays unanswered: by then
 * the message already said so, and a thread is a conversation.
 */
async function tellIfOvertaken(deps: ListenerDeps, message: z.infer<typeof ThreadReply>, record: RequestRecord): Promise<void> {
  const writtenAt = Number(message.ts) * 1000;
  if (record.endedAt === undefined || !(writtenAt <= record.endedAt) || !parseThreadReply(record, message.text)) return;
  await tellPerson(deps, { channel: message.channel, user: message.user, threadTs: message.thread_ts }, endedNotice(record));
}

/** Tells the person, in the thread, that their reply did not count; the request stays as it was. */
async function notRecorded(deps: ListenerDeps, message: z.infer<typeof ThreadReply>, failure: Bounded<unknown> & { ok: false }, id?: string): Promise<void> {
  deps.logger.warn({ id, channel: message.channel, reason: failure.reason, error: failure.error }, "slack thread reply not recorded");
  await tellPerson(deps, { channel: message.channel, user: message.user, threadTs: message.thread_ts }, NOT_RECORDED_REPLY);
}
