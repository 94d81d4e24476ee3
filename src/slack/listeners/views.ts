/**
 * Modal submissions (view_submission). Unlike clicks, the ack carries the
 * answer to Slack: an invalid answer is acked with `response_action:
 * "errors"` next to the field and nothing is recorded. So the listener reads
 * the request, validates synchronously, acks, and only then records.
 */
import type { App } from "@slack/bolt";
import { z } from "zod";
import type { RequestRecord } from "../../requests/model.js";
import { isOneTap } from "../blocks/index.js";
import { decodeMetadata, View, type ModalMetadata } from "../ids.js";
import {
  parseAskSubmission,
  parseDenyReasonSubmission,
  parseEditSubmission,
  parseInteractiveSubmission,
  parseOtherSubmission,
  parseStateValues,
  type SubmissionResult,
} from "../submissions.js";
import { displayName, isRequestMessage, personOf, SlackUser, type ListenerDeps } from "./context.js";
import { endedNotice, reportOutcome, tellPerson } from "./notices.js";

const ViewSubmission = z.looseObject({
  type: z.literal("view_submission"),
  user: SlackUser,
  view: z.looseObject({
    callback_id: z.string(),
    private_metadata: z.string().optional(),
    state: z.looseObject({ values: z.unknown() }).optional(),
  }),
});
type ViewSubmission = z.infer<typeof ViewSubmission>;

type Ack = (response?: { response_action: "errors"; errors: Record<string, string> }) => Promise<void>;

export function register(app: App, deps: ListenerDeps): void {
  app.view(/.*/, async ({ ack, body }) => {
    let acked = false;
    const once: Ack = async (response) => {
      if (acked) return;
      acked = true;
      await (response ? ack(response) : ack());
    };
    try {
      await handleSubmission(deps, body, once);
    } catch (error) {
      deps.logger.error({ error }, "slack view submission failed");
    } finally {
      await once();
    }
  });
}

async function handleSubmission(deps: ListenerDeps, raw: unknown, ack: Ack): Promise<void> {
  const parsed = ViewSubmission.safeParse(raw);
  if (!parsed.success) return deps.logger.debug("slack view ignored: not a view_submission payload");
  const body = parsed.data;
  const meta = decodeMetadata(body.view.private_metadata);
  if (!meta) return deps.logger.debug({ callbackId: body.view.callback_id }, "slack view ignored: undecodable metadata");
  const record = await deps.service.get(meta.r);
  if (!record || !comesFromRequestMessage(record, meta)) {
    return deps.logger.debug({ id: meta.r }, "slack view ignored: no such request on this message");
  }
  const target = { channel: record.slack!.channel, user: body.user.id };
  if (record.status !== "pending") {
    await ack();
    return tellPerson(deps, target, endedNotice(record));
  }
  const result = parseSubmission(record, body, meta);
  if (!result) return deps.logger.debug({ id: record.id, callbackId: body.view.callback_id }, "slack view ignored: does not apply");
  if (!result.ok) return ack({ response_action: "errors", errors: result.errors });
  await ack();
  const outcome = await deps.service.answer(record.id, result.decision, personOf(body.user), record);
  await reportOutcome(deps, outcome, target);
}

/** Modals carry the message they were opened from; it must still be the request's message. */
function comesFromRequestMessage(record: RequestRecord, meta: ModalMetadata): boolean {
  return isRequestMessage(record, { channel: meta.c, ts: meta.ts });
}

function parseSubmission(record: RequestRecord, body: ViewSubmission, meta: ModalMetadata): SubmissionResult | undefined {
  const values = parseStateValues(body.view.state?.values);
  const request = record.body;
  switch (body.view.callback_id) {
    case View.edit:
      return request.kind === "permission" ? parseEditSubmission(values) : undefined;
    case View.denyReason:
      return request.kind === "permission" ? parseDenyReasonSubmission(values, displayName(body.user)) : undefined;
    case View.other:
      // Other… exists only on one-tap questions; elsewhere it would answer one question of several.
      return request.kind === "ask_user_question" && isOneTap(record) ? parseOtherSubmission(request, meta.q ?? 0, values) : undefined;
    case View.answer:
      if (request.kind === "ask_user_question") return parseAskSubmission(request, values);
      if (request.kind === "interactive_questions") return parseInteractiveSubmission(request, values);
      return undefined;
    default:
      return undefined;
  }
}
