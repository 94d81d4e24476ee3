/**
 * Block Kit for every Slack message and modal of the relay: pure functions
 * from a RequestRecord to JSON. The listeners and the messenger import from
 * here; ids and codecs shared with the listeners live in ../ids.ts.
 *
 * Ended messages keep the "View full input" button (it answers nothing);
 * every answer button is gone.
 */
export type { SlackMessage } from "./limits.js";
export { LIMITS } from "./limits.js";
export { escapeMrkdwn } from "./escape.js";
export { requestMessage, endedMessage, askedLine } from "./message.js";
export { alwaysAllowModal, editModal, denyReasonModal, otherModal } from "./modals.js";
export { answerModal } from "./modals-answer.js";
export { inputModal, inputPageCount } from "./input-viewer.js";
export { canEditInput, offersEdit } from "./permission.js";
export { approvalsText } from "./approvers.js";
export { approvalCountedNotice, duplicateApprovalNotice, refusalNotice } from "./notices.js";
export { escalationPost, escalationText, reminderText, timeLeft } from "./reminders.js";
export { outcomeDirectMessage, outcomeReplyText } from "./outcome-notices.js";
export { isOneTap } from "./one-tap.js";
export { extendedNotice, noMoreTimeNotice } from "./more-time.js";
export { homeView, HOME_LIMITS, revokedNotice, REVOKE_NOTICES, type HomeContent, type HomeRules, type HomeWaiting, type WaitingRequest } from "./home.js";
