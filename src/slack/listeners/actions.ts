/**
 * Button clicks (block_actions) on request messages and inside the
 * full-input modal. Acks at once, then checks the click really belongs to
 * the request's message, then records the decision or opens a modal. A
 * click that cannot be tied to a request is acked and ignored.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { RequestRecord } from "../../requests/model.js";
import { answerModal, denyReasonModal, editModal, inputModal, otherModal } from "../blocks/index.js";
import { Action, decodeButton, decodeMetadata, type ButtonValue, type ModalMetadata } from "../ids.js";
import { interpretButton, type ModalName } from "./buttons.js";
import { displayName, isRequestMessage, personOf, SlackUser, type ListenerDeps } from "./context.js";
import { endedNotice, reportOutcome, tellPerson, type NoticeTarget } from "./notices.js";

const BlockActions = z.looseObject({
  type: z.literal("block_actions"),
  user: SlackUser,
  trigger_id: z.string().optional(),
  channel: z.looseObject({ id: z.string() }).nullish(),
  message: z.looseObject({ ts: z.string() }).nullish(),
  container: z.looseObject({ channel_id: z.string().optional(), message_ts: z.string().optional() }).nullish(),
  view: z.looseObject({ id: z.string(), hash: z.string().optional(), private_metadata: z.string().optional() }).nullish(),
  actions: z.array(z.looseObject({ action_id: z.string(), value: z.string().optional() })).min(1),
});
type BlockActions = z.infer<typeof BlockActions>;

export function register(app: App, deps: ListenerDeps): void {
  app.action(/.*/, async ({ ack, body }) => {
    await ack();
    try {
      await handleClick(deps, body);
    } catch (error) {
      deps.logger.error({ error }, "slack action failed");
    }
  });
}

async function handleClick(deps: ListenerDeps, raw: unknown): Promise<void> {
  const parsed = BlockActions.safeParse(raw);
  if (!parsed.success) return deps.logger.debug("slack action ignored: not a block_actions payload");
  const body = parsed.data;
  const action = body.actions[0]!;
  const value = decodeButton(action.value);
  if (!value) return deps.logger.debug({ actionId: action.action_id }, "slack action ignored: undecodable value");
  if (action.action_id === Action.viewPage) return turnPage(deps, body, value);

  const record = await deps.service.get(value.r);
  const where = {
    channel: body.channel?.id ?? body.container?.channel_id,
    ts: body.message?.ts ?? body.container?.message_ts,
  };
  if (!record || !isRequestMessage(record, where)) {
    return deps.logger.debug({ id: value.r, ...where }, "slack action ignored: no such request on this message");
  }
  const target: NoticeTarget = { channel: record.slack!.channel, user: body.user.id };
  const outcome = interpretButton(record, action.action_id, value, displayName(body.user));
  switch (outcome.type) {
    case "ignore":
      return deps.logger.debug({ id: record.id, actionId: action.action_id, reason: outcome.reason }, "slack action ignored");
    case "decision": {
      const result = await deps.service.answer(record.id, outcome.decision, personOf(body.user), record);
      return reportOutcome(deps, result, target);
    }
    case "modal":
      // The full-input modal only shows what was asked, so it opens whatever the status.
      if (record.status !== "pending" && outcome.modal !== "input") return tellPerson(deps, target, endedNotice(record));
      return openModal(deps, body, record, outcome.modal, outcome.questionIndex);
  }
}

async function openModal(deps: ListenerDeps, body: BlockActions, record: RequestRecord, name: ModalName, q?: number): Promise<void> {
  if (!body.trigger_id) return deps.logger.debug({ id: record.id }, "slack modal not opened: no trigger_id");
  const meta: ModalMetadata = { r: record.id, c: record.slack!.channel, ts: record.slack!.ts };
  const view = buildModal(record, name, q === undefined ? meta : { ...meta, q });
  try {
    await deps.client.views.open({ trigger_id: body.trigger_id, view });
  } catch (error) {
    deps.logger.warn({ id: record.id, modal: name, error }, "slack views.open failed");
  }
}

function buildModal(record: RequestRecord, name: ModalName, meta: ModalMetadata) {
  switch (name) {
    case "edit":
      return editModal(record, meta);
    case "denyReason":
      return denyReasonModal(record, meta);
    case "other":
      return otherModal(record, meta.q ?? 0, meta);
    case "answer":
      return answerModal(record, meta);
    case "input":
      return inputModal(record, 0);
  }
}

/** Page buttons inside the full-input modal: swap the page in place. */
async function turnPage(deps: ListenerDeps, body: BlockActions, value: ButtonValue): Promise<void> {
  const meta = decodeMetadata(body.view?.private_metadata);
  if (!body.view || meta?.r !== value.r) return deps.logger.debug("slack page ignored: not inside this request's modal");
  const record = await deps.service.get(value.r);
  if (!record) return deps.logger.debug({ id: value.r }, "slack page ignored: unknown request");
  const update = { view_id: body.view.id, view: inputModal(record, value.p ?? 0) };
  try {
    await deps.client.views.update(body.view.hash ? { ...update, hash: body.view.hash } : update);
  } catch (error) {
    deps.logger.warn({ id: record.id, error }, "slack views.update failed");
  }
}
