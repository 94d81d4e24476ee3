/**
 * Approvers and quorum a request asks for itself (docs/architecture.md §7: an agent may
 * only narrow its route's), as people in Slack meet them through the real
 * Bolt HTTP receiver: someone the route lists but the request left out is
 * refused, and a request that asks for two approvals gets them counted
 * where its route would take one.
 */
import { describe, expect, it } from "vitest";
import { Action } from "../../../src/slack/ids.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { clickAs, ephemerals, members, watchAgent } from "../../helpers/slack-approvers.js";
import { CHANNEL } from "../../helpers/slack.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { ONCALL } from "../../fixtures/policies.js";
import { approverRoutes } from "../../fixtures/routes.js";

const input = { command: "psql -c 'VACUUM FULL orders'" };
const permission = (extra: Record<string, unknown>) => ({ kind: "permission", toolName: "Bash", input, ...extra });

let relay: SlackRelay;
useSlackRelay((started) => (relay = started), { routes: approverRoutes });

describe("a request's own approvers", () => {
  it("a request that names only Bob, of the on-call group, refuses Alice whom the route lists; Bob answers", async () => {
    relay.api.onPost().on("usergroups.users.list", members(BOB.id)).on("chat.postEphemeral").on("chat.update");
    const record = await relay.create(permission({ approvers: { users: [BOB.id] } }));
    expect(relay.api.callsTo("usergroups.users.list")[0]?.args).toEqual({ usergroup: ONCALL });
    await clickAs(relay, Action.allow, record.id, ALICE);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: `🔒 Only <@${BOB.id}> can answer this request.` }]);
    expect((await relay.service.get(record.id))?.status).toBe("pending");
    await clickAs(relay, Action.allow, record.id, BOB);
    expect((await relay.service.get(record.id))?.answeredBy).toEqual(BOB);
    relay.api.done();
  });

  it("a request that asks for two approvals where its route takes one counts the first and answers on the second", async () => {
    relay.api.onPost().on("usergroups.users.list", members(BOB.id)).on("chat.postEphemeral").on("chat.update", { ok: true }, 2);
    const record = await relay.create(permission({ quorum: 2 }));
    const agent = watchAgent(relay, record.id);
    await clickAs(relay, Action.allow, record.id, ALICE);
    expect(ephemerals(relay)).toEqual([{ channel: CHANNEL, user: ALICE.id, text: "Your approval counted: 1 of 2. Waiting for 1 more." }]);
    expect(await agent.stillWaiting()).toBe(true);
    await clickAs(relay, Action.allow, record.id, BOB);
    expect((await agent.answer)?.decision).toStrictEqual({ behavior: "allow", updatedInput: input });
    relay.api.done();
  });
});
