/**
 * The "+30 min" row of a pending request's message and the texts of a click
 * on it: the row comes last, under every kind's answer buttons, only while
 * the request can take more time and has something to answer, never in an
 * ended message.
 */
import { describe, expect, it } from "vitest";
import { MAX_TIMEOUT_SECONDS } from "../../../../src/protocol/request-body.js";
import { EXTENSION_MS } from "../../../../src/requests/more-time.js";
import { endedMessage, extendedNotice, noMoreTimeNotice, requestMessage } from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits } from "../../../helpers/block-kit-limits.js";
import { Action, encodeButton } from "../../../../src/slack/ids.js";
import { answered, askRecord, CREATED_AT, interactiveRecord, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { actionIds, block, blocksOf } from "../../../helpers/blocks.js";

const ROW = {
  type: "actions",
  block_id: "more_time",
  elements: [{ type: "button", action_id: Action.moreTime, text: { type: "plain_text", text: "+30 min" }, value: encodeButton({ r: "req-0001" }) }],
};

describe("the +30 min row", () => {
  it.each([
    ["permission", permissionRecord()],
    ["step gate", stepGateRecord()],
    ["AskUserQuestion", askRecord()],
    ["InteractiveQuestion", interactiveRecord()],
  ])("is the last block of a pending %s message, under its answer buttons", (_kind, record) => {
    const message = requestMessage(record);
    const ids = blocksOf(message).map((b) => b.block_id);
    expect(blocksOf(message).at(-1)).toEqual(ROW);
    expect(ids.slice(0, -1).some((id) => id === "actions" || /^q\d+_o\d+$/.test(id ?? ""))).toBe(true);
    expect(checkMessageLimits(message)).toEqual([]);
  });

  it("is left out where the caller gives up at its own deadline (extendable: false)", () => {
    expect(block(requestMessage(permissionRecord({ extendable: false })), "more_time")).toBeUndefined();
    expect(block(requestMessage(stepGateRecord({ extendable: false })), "more_time")).toBeUndefined();
  });

  it("is left out once 30 more minutes would pass the longest wait, and shown while they fit exactly", () => {
    const cap = CREATED_AT + MAX_TIMEOUT_SECONDS * 1000;
    expect(block(requestMessage(permissionRecord({}, { expiresAt: cap - EXTENSION_MS })), "more_time")).toEqual(ROW);
    expect(block(requestMessage(permissionRecord({}, { expiresAt: cap - EXTENSION_MS + 1 })), "more_time")).toBeUndefined();
  });

  it("is left out where there is nothing to answer", () => {
    const record = interactiveRecord({ autonomous: true, questions: [{ id: "d", question: "D?", type: "confirm", default: true }] });
    expect(actionIds(requestMessage(record))).toEqual([]);
  });

  it("is gone from the ended message", () => {
    const record = answered(permissionRecord(), { behavior: "allow", updatedInput: {} });
    expect(actionIds(endedMessage(record))).not.toContain(Action.moreTime);
  });
});

describe("what the clicker is told", () => {
  it("after the click, the new deadline as a Slack date each reader sees in their own time zone", () => {
    const record = permissionRecord({}, { expiresAt: CREATED_AT + 600_000 + EXTENSION_MS });
    const seconds = Math.floor(record.expiresAt / 1000);
    expect(extendedNotice(record)).toBe(
      `⏱ You gave this request 30 more minutes: it now expires <!date^${seconds}^{date_short_pretty} {time}|2023-11-14 22:53 UTC>.`,
    );
  });

  it("when no more time can be given, why", () => {
    expect(noMoreTimeNotice("not_extendable")).toBe(
      "⏱ This request cannot be given more time: the agent stops waiting at its own deadline (a Claude Code hook's timeout). Nothing changed.",
    );
    expect(noMoreTimeNotice("at_cap")).toBe(
      "⏱ This request cannot wait any longer: no request waits more than 7 days from when it was asked. Nothing changed.",
    );
  });
});
