/**
 * "+30 min" (issue 9) through the real Bolt HTTP receiver with signed
 * payloads: where the button is shown and where it is not (a request whose
 * caller gives up at its own deadline, as a Claude Code hook call does; a
 * request at the longest wait), and a click by an approver, by someone who
 * may not answer, on an ended request, and a forged one where no more time
 * is offered. Only the clicker is told what happened; the message shows the
 * new deadline.
 */
import { describe, expect, it } from "vitest";
import { MAX_TIMEOUT_SECONDS } from "../../../src/protocol/request-body.js";
import { EXTENSION_MS } from "../../../src/requests/more-time.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import { extendedNotice } from "../../../src/slack/blocks/index.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { parseHookInput } from "../../../src/requests/hooks/input.js";
import { hookRequestBody } from "../../../src/requests/hooks/request.js";
import { hookFixture } from "../../fixtures/claude-code.js";
import { ALICE, BOB, CAROL } from "../../fixtures/people.js";
import { approverRoutes, ONLY_ALICE_AND_ONCALL } from "../../fixtures/routes.js";
import { clickAs, ephemerals, members, watchAgent } from "../../helpers/slack-approvers.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL } from "../../helpers/slack.js";

const permission = (extra: Record<string, unknown> = {}) => ({ kind: "permission", toolName: "Bash", input: { command: "make deploy" }, ...extra });
const stepGate = { kind: "step_gate", toolName: "Bash", input: { command: "terraform apply" }, labels: { policy: "anyone" } };
const question = { kind: "interactive_questions", questions: [{ id: "go", question: "Ship it?", type: "confirm" }], labels: { policy: "anyone" } };

let relay: SlackRelay;
useSlackRelay((started) => (relay = started), { routes: approverRoutes });

/** The "+30 min" buttons of the message the relay posted (or last updated) with `method`. */
function moreTimeButtons(method: "chat.postMessage" | "chat.update"): unknown[] {
  const blocks = (relay.api.callsTo(method).at(-1)?.args.blocks ?? []) as Array<{ block_id?: string; elements?: Array<{ action_id?: string }> }>;
  return blocks.flatMap((block) => (block.elements ?? []).filter((element) => element.action_id === Action.moreTime).map(() => block.block_id));
}

/** The "Expires …" Slack date token a message built from `record` shows. */
const expiresToken = (record: Pick<RequestRecord, "expiresAt">) => `Expires <!date^${Math.floor(record.expiresAt / 1000)}^`;

const click = (id: string, user = ALICE) => clickAs(relay, Action.moreTime, id, user);

describe("the +30 min button", () => {
  it.each([
    ["permission", permission()],
    ["step gate", stepGate],
    ["one-tap question", question],
  ])("is under the answer buttons of a pending %s message", async (_kind, body) => {
    relay.api.onPost();
    await relay.create(body);
    expect(moreTimeButtons("chat.postMessage")).toEqual(["more_time"]);
    relay.api.done();
  });

  it.each([
    ["a Claude Code PermissionRequest hook call", hookRequestBody(parseHookInput(hookFixture("permission-request")), { timeoutSeconds: 595 })],
    ["a Claude Code PreToolUse hook call", hookRequestBody(parseHookInput(hookFixture("pre-tool-use")), { timeoutSeconds: 27 })],
    ["an agent that says extendable: false", permission({ extendable: false })],
  ])("is not offered on a request made for %s, which gives up at its own deadline", async (_caller, body) => {
    relay.api.onPost();
    const record = await relay.create(body);
    expect(record.body.extendable).toBe(false);
    expect(moreTimeButtons("chat.postMessage")).toEqual([]);
    relay.api.done();
  });

  it("is not offered on a request less than 30 minutes from the longest wait", async () => {
    relay.api.onPost();
    await relay.create(permission({ timeoutSeconds: MAX_TIMEOUT_SECONDS - 60 }));
    expect(moreTimeButtons("chat.postMessage")).toEqual([]);
    relay.api.done();
  });
});

describe("a click on +30 min", () => {
  it("by an approver moves the deadline before the ack, shows the new Expires in the message and tells them; the agent keeps waiting", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission());
    expect(JSON.stringify(relay.api.callsTo("chat.postMessage")[0]?.args.blocks)).toContain(expiresToken(record));
    const agent = watchAgent(relay, record.id);
    const response = await relay.post(blockAction({ actionId: Action.moreTime, value: encodeButton({ r: record.id }), user: ALICE }));
    expect(response.status).toBe(200);
    const moved = (await relay.service.get(record.id))!;
    expect(moved).toMatchObject({ status: "pending", expiresAt: record.expiresAt + EXTENSION_MS });
    await relay.settle();
    const update = JSON.stringify(relay.api.callsTo("chat.update")[0]?.args.blocks);
    expect(update).toContain(expiresToken(moved));
    expect(update).not.toContain(expiresToken(record));
    expect(moreTimeButtons("chat.update")).toEqual(["more_time"]);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: extendedNotice(moved) }]);
    expect(extendedNotice(moved)).toMatch(/^⏱ You gave this request 30 more minutes: it now expires <!date\^\d+\^/);
    expect(await agent.stillWaiting()).toBe(true);
    relay.api.on("chat.update");
    await clickAs(relay, Action.allow, record.id, ALICE);
    expect((await agent.answer)?.decision).toStrictEqual({ behavior: "allow", updatedInput: { command: "make deploy" } });
    relay.api.done();
  });

  it("by someone who may not answer is refused: only they are told who may, and the deadline and message stay", async () => {
    relay.api.onPost().on("usergroups.users.list", members(CAROL.id)).on("chat.postEphemeral");
    const record = await relay.create(permission());
    const agent = watchAgent(relay, record.id);
    await click(record.id, BOB);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: BOB.id, text: ONLY_ALICE_AND_ONCALL }]);
    expect((await relay.service.get(record.id))?.expiresAt).toBe(record.expiresAt);
    expect(relay.api.callsTo("chat.update")).toEqual([]);
    expect(await agent.stillWaiting()).toBe(true);
    relay.api.done();
  });

  it("on an ended request changes nothing and tells the clicker how it ended", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission());
    await clickAs(relay, Action.deny, record.id, ALICE);
    await click(record.id, ALICE);
    const ended = await relay.service.get(record.id);
    expect(ended).toMatchObject({ status: "answered", expiresAt: record.expiresAt });
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: `This request was already answered: ❌ Denied by <@${ALICE.id}>` }]);
    expect(relay.api.callsTo("chat.update")).toHaveLength(1);
    relay.api.done();
  });

  it.each([
    [
      "whose caller gives up at its deadline",
      permission({ extendable: false }),
      "⏱ This request cannot be given more time: the agent stops waiting at its own deadline (a Claude Code hook's timeout). Nothing changed.",
    ],
    [
      "at the longest wait",
      permission({ timeoutSeconds: MAX_TIMEOUT_SECONDS - 60 }),
      "⏱ This request cannot wait any longer: no request waits more than 7 days from when it was asked. Nothing changed.",
    ],
  ])("forged on a request %s changes nothing and says why", async (_which, body, text) => {
    relay.api.onPost().on("chat.postEphemeral");
    const record = await relay.create(body);
    await click(record.id, ALICE);
    expect((await relay.service.get(record.id))?.expiresAt).toBe(record.expiresAt);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: ALICE.id, text }]);
    expect(relay.api.callsTo("chat.update")).toEqual([]);
    relay.api.done();
  });
});
