/**
 * Button clicks (block_actions), routed on their action_id. The ids are the
 * fixed constants of ids.ts (the request id travels in the button's value,
 * never in the action_id). Each button family is one route whose pattern
 * names exactly its ids (`oneOf`), and every family's route goes through one
 * Bolt listener (clicks.ts): Bolt runs every registered listener's middleware
 * for every interaction (about 20 µs each on the bench machines, and most of
 * the garbage Bolt made for a click), so a listener per id, or per family,
 * would be paid on every click before the answer is recorded.
 *
 * - answer buttons (Allow, Allow for 15 min, Always allow, Deny, Deny & stop,
 *   Yes / No / Stop, one-tap options and confirms) record the answer *before* the ack, within
 *   STORE_BUDGET, so an acked click is never lost: if the process dies right
 *   after the ack, the answer is already stored. A click the store could not
 *   take in time (down, slow, erroring) is acked and the person is told
 *   (ephemeral) that it was not recorded; the buttons stay.
 * - modal and page buttons live in modal-buttons.ts;
 * - any other action_id is acked and ignored here.
 *
 * A click counts only on the message the request was posted as.
 */
import { z } from "zod";
import type { SlackRef } from "../../protocol/request-view.js";
import { Action, decodeButton, type ButtonValue } from "../ids.js";
import { interpretButton, type ButtonOutcome } from "./buttons.js";
import {
  actedOn,
  acking,
  displayName,
  noneOf,
  NOT_RECORDED,
  oneOf,
  answererOf,
  SlackUser,
  STORE_BUDGET,
  withinBudget,
  type Ack,
  type Bounded,
  type ListenerDeps,
} from "./context.js";
import { endedNotice, refusalNotice, reportOutcome, tellPerson } from "./notices.js";
import { openModal } from "./open-modal.js";
import { reportRule } from "./rule-click.js";
import type { ClickRoutes } from "./clicks.js";

/** Buttons whose click is an answer. */
export const ANSWER_BUTTONS = [
  Action.allow,
  Action.allowForAWhile,
  Action.alwaysAllow,
  Action.deny,
  Action.denyAndStop,
  Action.stepYes,
  Action.stepNo,
  Action.stepStop,
  Action.option,
  Action.confirmYes,
  Action.confirmNo,
] as const;

export const BlockActions = z.looseObject({
  type: z.literal("block_actions"),
  user: SlackUser,
  trigger_id: z.string().optional(),
  channel: z.looseObject({ id: z.string() }).nullish(),
  message: z.looseObject({ ts: z.string() }).nullish(),
  container: z.looseObject({ channel_id: z.string().optional(), message_ts: z.string().optional() }).nullish(),
  view: z.looseObject({ id: z.string(), hash: z.string().optional(), private_metadata: z.string().optional() }).nullish(),
  actions: z.array(z.looseObject({ action_id: z.string(), value: z.string().optional() })).min(1),
});
export type BlockActions = z.infer<typeof BlockActions>;

/** A click parsed: the payload, the clicked action, its decoded value and the message it came from. */
export interface Click {
  body: BlockActions;
  actionId: string;
  value: ButtonValue;
  where: Partial<SlackRef>;
}

export function register(clicks: ClickRoutes, deps: ListenerDeps): void {
  const answer = acking<void>(deps, "answer click", (body, ack) => answerClick(deps, body, ack));
  clicks.add(oneOf(ANSWER_BUTTONS), answer);
  clicks.add(noneOf(Object.values(Action)), async ({ ack }) => ack());
}

/** A click tied to a button value, or undefined (logged) when the payload is not one. */
export function parseClick(deps: ListenerDeps, raw: unknown): Click | undefined {
  const parsed = BlockActions.safeParse(raw);
  if (!parsed.success) return void deps.logger.debug("slack action ignored: not a block_actions payload");
  const body = parsed.data;
  const action = body.actions[0]!;
  const value = decodeButton(action.value);
  if (!value) return void deps.logger.debug({ actionId: action.action_id }, "slack action ignored: undecodable value");
  const where = { channel: body.channel?.id ?? body.container?.channel_id, ts: body.message?.ts ?? body.container?.message_ts };
  return { body, actionId: action.action_id, value, where };
}

async function answerClick(deps: ListenerDeps, raw: unknown, ack: Ack): Promise<void> {
  const started = performance.now();
  const click = parseClick(deps, raw);
  if (!click) return;
  const person = answererOf(click.body.user);
  const answering = deps.service.answerFromMessage<Exclude<ButtonOutcome, { type: "decision" }>>({
    id: click.value.r,
    message: click.where,
    person,
    read: (record) => {
      const outcome = interpretButton(record, click.actionId, click.value, displayName(click.body.user));
      return outcome.type === "decision" ? { decision: outcome.decision } : { none: outcome };
    },
  });
  const answered = await withinBudget(answering, STORE_BUDGET.totalMs);
  if (!answered.ok) return notRecorded(deps, click, answered, ack);
  const left = () => STORE_BUDGET.totalMs - (performance.now() - started);
  const result = answered.value;
  if (result.outcome === "not_found") {
    return deps.logger.debug({ id: click.value.r, ...click.where }, "slack action ignored: no such request on this message");
  }
  if (result.outcome !== "no_answer") {
    await ack();
    return reportOutcome(deps, result, { channel: actedOn(result.record, click.where).channel, user: click.body.user.id });
  }
  const { record, none: outcome } = result;
  if (outcome.type === "modal" && outcome.modal === "alwaysAllow") {
    // Always allow with rules too long for the message: show them all in a confirm modal first.
    await ack();
    const target = { channel: actedOn(record, click.where).channel, user: click.body.user.id };
    if (record.status !== "pending") return tellPerson(deps, target, endedNotice(record));
    const refusal = await withinBudget(deps.service.refusalFor(record, person), left());
    if (!refusal.ok || refusal.value) return tellPerson(deps, target, refusalNotice(record, refusal.ok ? refusal.value! : { reason: "unverified" }));
    return openModal(deps, click, record, outcome.modal);
  }
  if (outcome.type === "rule") {
    const granted = await withinBudget(deps.service.allowForAWhile(record.id, person), left());
    if (!granted.ok) return notRecorded(deps, click, granted, ack);
    return reportRule(deps, granted.value, record, { channel: actedOn(record, click.where).channel, user: click.body.user.id }, { ack, budgetMs: left() });
  }
  const reason = outcome.type === "ignore" ? outcome.reason : "not an answer";
  deps.logger.debug({ id: record.id, actionId: click.actionId, reason }, "slack action ignored");
}

/** Acks, then tells the person their click did not count; the message and its buttons stay as they are. */
async function notRecorded(deps: ListenerDeps, click: Click, failure: Bounded<unknown> & { ok: false }, ack: Ack): Promise<void> {
  await ack();
  deps.logger.warn({ id: click.value.r, actionId: click.actionId, reason: failure.reason, error: failure.error }, "slack click not recorded");
  if (click.where.channel === undefined) return;
  await tellPerson(deps, { channel: click.where.channel, user: click.body.user.id }, NOT_RECORDED);
}
