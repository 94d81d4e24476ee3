/**
 * Modal submissions (view_submission), routed by Bolt on their callback_id:
 * one listener for the answer modals, constrained to exactly their ids (see
 * actions.ts for why not one per id), and one that closes any other. Unlike a click, the ack carries the answer back to Slack, and
 * it must go out within Slack's 3 s: so the request is read within the
 * store budget (a store that does not answer in time gets an error next to
 * the first field asking to submit again), the answer is validated
 * synchronously (invalid: `response_action: "errors"`, nothing recorded), and
 * a valid answer is recorded before the ack, within the budget too: the modal
 * closes only once the answer is stored; otherwise it stays open with the
 * person's input and an error saying it was not recorded.
 */
import type { App, ViewResponseAction, ViewSubmitAction } from "@slack/bolt";
import { z } from "zod";
import type { RequestRecord } from "../../requests/model.js";
import { isOneTap } from "../blocks/index.js";
import { decodeMetadata, Field, View, type ModalMetadata } from "../ids.js";
import {
  parseAskSubmission,
  parseDenyReasonSubmission,
  parseEditSubmission,
  parseInteractiveSubmission,
  parseOtherSubmission,
  parseStateValues,
  type SubmissionResult,
} from "../submissions.js";
import {
  actedOn,
  acking,
  displayName,
  noneOf,
  NOT_RECORDED,
  NOT_RECORDED_FIELD,
  oneOf,
  answererOf,
  SlackUser,
  STORE_BUDGET,
  withinBudget,
  type Ack,
  type ListenerDeps,
} from "./context.js";
import { endedNotice, reportOutcome, tellPerson } from "./notices.js";
import { offersEdit, showsAlwaysAllow } from "../blocks/permission.js";
import { alwaysAllowGrant, alwaysAllowScope } from "../../requests/always-allow.js";

/** The modals a person submits an answer from, with the field an error lands on when no input block is found. */
const ANSWER_VIEWS = {
  [View.edit]: Field.editJson.block,
  [View.denyReason]: Field.denyReason.block,
  [View.other]: Field.otherText.block,
  [View.answer]: Field.question(0).block,
  /** No input: a submission that was not recorded closes the modal and the person is told in the channel. */
  [View.alwaysAllow]: undefined,
} as const;
type AnswerView = keyof typeof ANSWER_VIEWS;

const ViewSubmission = z.looseObject({
  type: z.literal("view_submission"),
  user: SlackUser,
  view: z.looseObject({
    callback_id: z.string(),
    private_metadata: z.string().optional(),
    blocks: z.array(z.looseObject({ type: z.string().optional(), block_id: z.string().optional() })).optional(),
    state: z.looseObject({ values: z.unknown() }).optional(),
  }),
});
type ViewSubmission = z.infer<typeof ViewSubmission>;

type ViewAck = Ack<ViewResponseAction>;

export function register(app: App, deps: ListenerDeps): void {
  const ids = Object.keys(ANSWER_VIEWS);
  const answer = acking<ViewResponseAction>(deps, "view submission", (body, ack) => submit(deps, body, ack));
  app.view<ViewSubmitAction>({ type: "view_submission", callback_id: oneOf(ids) }, answer);
  // Any other modal (the full-input viewer has no submit button) is closed and ignored.
  app.view<ViewSubmitAction>({ type: "view_submission", callback_id: noneOf(ids) }, async ({ ack }) => ack());
}

const isAnswerView = (id: string): id is AnswerView => Object.hasOwn(ANSWER_VIEWS, id);

async function submit(deps: ListenerDeps, raw: unknown, ack: ViewAck): Promise<void> {
  const started = performance.now();
  const parsed = ViewSubmission.safeParse(raw);
  if (!parsed.success) return deps.logger.debug("slack view ignored: not a view_submission payload");
  const body = parsed.data;
  const callbackId = body.view.callback_id;
  if (!isAnswerView(callbackId)) return deps.logger.debug({ callbackId }, "slack view ignored: not an answer modal");
  const meta = decodeMetadata(body.view.private_metadata);
  if (!meta) return deps.logger.debug({ callbackId }, "slack view ignored: undecodable metadata");
  const answering = deps.service.answerFromMessage<Extract<SubmissionResult, { ok: false }> | undefined>({
    id: meta.r,
    message: { channel: meta.c, ts: meta.ts },
    person: answererOf(body.user),
    read: (record) => {
      // An ended request takes no submission (its person is told so); one that does not apply, or has errors, answers nothing.
      const result = record.status === "pending" ? parseSubmission(record, callbackId, body, meta) : undefined;
      return result?.ok ? { decision: result.decision } : { none: result };
    },
  });
  const answered = await withinBudget(answering, STORE_BUDGET.totalMs - (performance.now() - started));
  if (!answered.ok) return notRecorded(deps, callbackId, body, meta, answered, ack);
  const result = answered.value;
  if (result.outcome === "not_found") return deps.logger.debug({ id: meta.r }, "slack view ignored: no such request on this message");
  const target = { channel: actedOn(result.record, { channel: meta.c, ts: meta.ts }).channel, user: body.user.id };
  if (result.outcome === "no_answer") {
    if (result.none) return ack({ response_action: "errors", errors: result.none.errors });
    if (result.record.status === "pending") return deps.logger.debug({ id: meta.r, callbackId }, "slack view ignored: does not apply");
    await ack();
    return tellPerson(deps, target, endedNotice(result.record));
  }
  await ack();
  await reportOutcome(deps, result, target);
}

/** Keeps the modal open with an error on its first field: nothing was recorded, the person submits again. */
async function notRecorded(
  deps: ListenerDeps,
  callbackId: AnswerView,
  body: ViewSubmission,
  meta: ModalMetadata,
  failure: { reason: string; error?: unknown },
  ack: ViewAck,
) {
  deps.logger.warn({ id: meta.r, callbackId, reason: failure.reason, error: failure.error }, "slack view submission not recorded");
  const block = firstInputBlock(body) ?? ANSWER_VIEWS[callbackId];
  if (block === undefined) {
    await ack();
    if (meta.c !== undefined) await tellPerson(deps, { channel: meta.c, user: body.user.id }, NOT_RECORDED);
    return;
  }
  return ack({ response_action: "errors", errors: { [block]: NOT_RECORDED_FIELD } });
}

/** The block_id of the modal's first input block, as Slack sent the view back. */
function firstInputBlock(body: ViewSubmission): string | undefined {
  return body.view.blocks?.find((block) => block.type === "input" && block.block_id)?.block_id;
}

function parseSubmission(record: RequestRecord, callbackId: AnswerView, body: ViewSubmission, meta: ModalMetadata): SubmissionResult | undefined {
  const values = parseStateValues(body.view.state?.values);
  const request = record.body;
  switch (callbackId) {
    case View.edit:
      return request.kind === "permission" && offersEdit(record) ? parseEditSubmission(values) : undefined;
    case View.alwaysAllow:
      return alwaysAllowSubmission(record);
    case View.denyReason:
      return request.kind === "permission" ? parseDenyReasonSubmission(values, displayName(body.user)) : undefined;
    case View.other:
      // Other… exists only on one-tap questions; elsewhere it would answer one question of several.
      return request.kind === "ask_user_question" && isOneTap(record) ? parseOtherSubmission(request, meta.q ?? 0, values) : undefined;
    case View.answer:
      if (request.kind === "ask_user_question") return parseAskSubmission(request, values);
      if (request.kind === "interactive_questions") return parseInteractiveSubmission(request, values);
      return undefined;
  }
}

/** Saves exactly the rules the modal listed: the same grant the message computes from the stored request. */
function alwaysAllowSubmission(record: RequestRecord): SubmissionResult | undefined {
  if (record.body.kind !== "permission" || !showsAlwaysAllow(record)) return undefined;
  const { granted } = alwaysAllowGrant(record.body, alwaysAllowScope(record));
  return { ok: true, decision: { behavior: "allow", updatedInput: record.body.input, updatedPermissions: granted } };
}
