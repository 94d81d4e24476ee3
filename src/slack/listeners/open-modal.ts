/**
 * Opens the modal a click asked for, tied to the request's message (the
 * metadata carries the message, so a submission counts only from there).
 */
import type { RequestRecord } from "../../requests/model.js";
import { alwaysAllowModal, answerModal, denyReasonModal, editModal, inputModal, otherModal } from "../blocks/index.js";
import type { ModalMetadata } from "../ids.js";
import type { Click } from "./actions.js";
import type { ModalName } from "./buttons.js";
import { actedOn, type ListenerDeps } from "./context.js";

export async function openModal(deps: ListenerDeps, click: Click, record: RequestRecord, name: ModalName, q?: number): Promise<void> {
  const triggerId = click.body.trigger_id;
  if (!triggerId) return deps.logger.debug({ id: record.id }, "slack modal not opened: no trigger_id");
  // Tied to the message clicked: a copy adopted on the click counts as the request's own from there.
  const message = actedOn(record, click.where);
  const meta: ModalMetadata = { r: record.id, c: message.channel, ts: message.ts };
  const view = buildModal(record, name, q === undefined ? meta : { ...meta, q });
  try {
    await deps.client.views.open({ trigger_id: triggerId, view });
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
    case "alwaysAllow":
      return alwaysAllowModal(record, meta);
  }
}
