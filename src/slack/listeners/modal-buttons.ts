/**
 * Buttons that open a modal (Edit…, Deny with reason…, Other…, Answer…,
 * View full input) and the page buttons inside the full-input modal: one
 * click route per family, constrained to its action_ids (see actions.ts and
 * clicks.ts for why not one per id). Opening a modal records nothing, so these ack
 * at once; the request is then read, and who may answer checked, within one
 * store budget (STORE_BUDGET.readMs for both: views.open must follow the
 * click within 3 s, while its trigger_id is valid), and a store that does
 * not answer in time, or a Slack that cannot confirm the message clicked is
 * the request's (its history failing), gets the person a notice instead of
 * silence.
 */
import { inputModal } from "../blocks/index.js";
import { Action, decodeMetadata } from "../ids.js";
import { parseClick } from "./actions.js";
import { interpretButton } from "./buttons.js";
import { openModal } from "./open-modal.js";
import { acking, actedOn, answererOf, displayName, NOT_OPENED, oneOf, STORE_BUDGET, withinBudget, type Ack, type ListenerDeps } from "./context.js";
import { endedNotice, refusalNotice, tellPerson } from "./notices.js";
import type { ClickRoutes } from "./clicks.js";

export const MODAL_BUTTONS = [Action.edit, Action.denyWithReason, Action.other, Action.answer, Action.viewInput] as const;

export function register(clicks: ClickRoutes, deps: ListenerDeps): void {
  const open = acking<void>(deps, "modal click", (body, ack) => modalClick(deps, body, ack));
  clicks.add(oneOf(MODAL_BUTTONS), open);
  clicks.add(
    Action.viewPage,
    acking<void>(deps, "page click", (body, ack) => turnPage(deps, body, ack)),
  );
}

async function modalClick(deps: ListenerDeps, raw: unknown, ack: Ack): Promise<void> {
  await ack();
  const click = parseClick(deps, raw);
  if (!click) return;
  const started = performance.now();
  const left = () => STORE_BUDGET.readMs - (performance.now() - started);
  const read = await withinBudget(deps.service.requestOnMessage(click.value.r, click.where), left());
  if (!read.ok) {
    deps.logger.warn(
      { id: click.value.r, actionId: click.actionId, reason: read.reason, error: read.error },
      "slack modal not opened: the request could not be read",
    );
    if (click.where.channel !== undefined) await tellPerson(deps, { channel: click.where.channel, user: click.body.user.id }, NOT_OPENED);
    return;
  }
  const record = read.value;
  if (!record) {
    return deps.logger.debug({ id: click.value.r, ...click.where }, "slack action ignored: no such request on this message");
  }
  const outcome = interpretButton(record, click.actionId, click.value, displayName(click.body.user));
  if (outcome.type !== "modal") {
    const reason = outcome.type === "ignore" ? outcome.reason : "not a modal button";
    return deps.logger.debug({ id: record.id, actionId: click.actionId, reason }, "slack action ignored");
  }
  // The full-input modal only shows what was asked, so it opens whatever the status and for anyone.
  const target = { channel: actedOn(record, click.where).channel, user: click.body.user.id };
  if (outcome.modal !== "input") {
    if (record.status !== "pending") return tellPerson(deps, target, endedNotice(record));
    // Checked again when the modal is submitted: who may answer can change meanwhile (an escalation, a group).
    const refusal = await withinBudget(deps.service.refusalFor(record, answererOf(click.body.user)), left());
    if (!refusal.ok) return tellPerson(deps, target, refusalNotice(record, { reason: "unverified" }));
    if (refusal.value) return tellPerson(deps, target, refusalNotice(record, refusal.value));
  }
  await openModal(deps, click, record, outcome.modal, outcome.questionIndex);
}

/** Page buttons inside the full-input modal: swap the page in place. */
async function turnPage(deps: ListenerDeps, raw: unknown, ack: Ack): Promise<void> {
  await ack();
  const click = parseClick(deps, raw);
  if (!click) return;
  const { body, value } = click;
  const meta = decodeMetadata(body.view?.private_metadata);
  if (!body.view || meta?.r !== value.r) return deps.logger.debug("slack page ignored: not inside this request's modal");
  const read = await withinBudget(deps.service.get(value.r), STORE_BUDGET.readMs);
  if (!read.ok) return deps.logger.warn({ id: value.r, reason: read.reason, error: read.error }, "slack page not turned: store did not answer");
  const record = read.value;
  if (!record) return deps.logger.debug({ id: value.r }, "slack page ignored: unknown request");
  const update = { view_id: body.view.id, view: inputModal(record, value.p ?? 0) };
  try {
    await deps.client.views.update(body.view.hash ? { ...update, hash: body.view.hash } : update);
  } catch (error) {
    deps.logger.warn({ id: record.id, error }, "slack views.update failed");
  }
}
