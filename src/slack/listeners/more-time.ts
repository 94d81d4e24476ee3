/**
 * The "+30 min" button (issue 9), a family of one: the click is checked and
 * recorded before the ack, within STORE_BUDGET, as an answer click is
 * (actions.ts), so an acked click has moved the deadline. The person is then
 * told what became of it, ephemerally: the new deadline (the message shows
 * it too, through the service's message update), that they may not answer
 * this request, that it has ended, or that it takes no more time. A click
 * the store could not take in time is acked and the person told nothing
 * changed.
 */
import type { MoreTimeResult } from "../../requests/service.js";
import { extendedNotice, noMoreTimeNotice } from "../blocks/index.js";
import { Action } from "../ids.js";
import { parseClick } from "./actions.js";
import { acking, actedOn, answererOf, STORE_BUDGET, withinBudget, type Ack, type ListenerDeps } from "./context.js";
import type { ClickRoutes } from "./clicks.js";
import { endedNotice, refusalNotice, tellPerson } from "./notices.js";

/** What a person whose click could not be recorded is told. */
export const NOT_EXTENDED = "⚠️ No time was added: the relay could not save your click just now. Nothing changed; try again in a moment.";

export function register(clicks: ClickRoutes, deps: ListenerDeps): void {
  clicks.add(
    Action.moreTime,
    acking<void>(deps, "more time click", (body, ack) => moreTimeClick(deps, body, ack)),
  );
}

async function moreTimeClick(deps: ListenerDeps, raw: unknown, ack: Ack): Promise<void> {
  const click = parseClick(deps, raw);
  if (!click) return;
  const target = click.where.channel === undefined ? undefined : { channel: click.where.channel, user: click.body.user.id };
  const notRecorded = async (reason: string, error?: unknown) => {
    await ack();
    deps.logger.warn({ id: click.value.r, reason, error }, "slack more time click not recorded");
    if (target) await tellPerson(deps, target, NOT_EXTENDED);
  };
  const moved = await withinBudget(deps.service.extendFromMessage(click.value.r, click.where, answererOf(click.body.user)), STORE_BUDGET.totalMs);
  if (!moved.ok) return notRecorded(moved.reason, moved.error);
  const result = moved.value;
  if (result.outcome === "not_found") return deps.logger.debug({ id: click.value.r, ...click.where }, "slack action ignored: no such request on this message");
  await ack();
  deps.home?.acted(click.body.user.id);
  if (result.outcome === "no_more_time") deps.logger.info({ id: result.record.id, reason: result.reason }, "slack more time click: no more time");
  await tellPerson(deps, { channel: actedOn(result.record, click.where).channel, user: click.body.user.id }, noticeFor(result));
}

function noticeFor(result: Exclude<MoreTimeResult, { outcome: "not_found" }>): string {
  switch (result.outcome) {
    case "applied":
      return extendedNotice(result.record);
    case "refused":
      return refusalNotice(result.record, result.refusal);
    case "already_ended":
      return endedNotice(result.record);
    case "no_more_time":
      return noMoreTimeNotice(result.reason);
  }
}
