/**
 * Replies in a request message's thread. A step gate takes y / yes / n / no /
 * q; an AskUserQuestion takes any text as a free-form answer. Everything
 * else (chatter, bots, edits, replies to ended requests) is ignored silently:
 * a thread is a conversation, and only a clear answer may change state.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { Decision, StepReply } from "../../protocol/decisions.js";
import type { RequestRecord } from "../../requests/model.js";
import type { ListenerDeps } from "./context.js";

/** A plain message from a person, in a thread. Anything else does not parse. */
const ThreadReply = z.looseObject({
  type: z.literal("message"),
  subtype: z.never().optional(),
  bot_id: z.never().optional(),
  user: z.string().min(1),
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

async function handleReply(deps: ListenerDeps, raw: unknown): Promise<void> {
  const parsed = ThreadReply.safeParse(raw);
  if (!parsed.success || parsed.data.thread_ts === parsed.data.ts) return;
  const message = parsed.data;
  const record = await deps.service.findBySlackMessage({ channel: message.channel, ts: message.thread_ts });
  if (!record || record.status !== "pending") return;
  const decision = parseThreadReply(record, message.text);
  if (!decision) return deps.logger.debug({ id: record.id }, "slack thread reply ignored");
  const result = await deps.service.answer(record.id, decision, { id: message.user }, record);
  deps.logger.debug({ id: record.id, outcome: result.outcome }, "slack thread reply recorded");
}
