/**
 * A quorum across relay instances (docs/architecture.md §7): two instances, each with the
 * real Bolt receiver, on one real Redis, and a route that needs two of
 * Alice and Carol. Slack delivers each click to one instance only, so two
 * approvals of the same request land on different instances at the same
 * moment; counting them and answering is one atomic step in Redis, so no
 * approval is lost and the request is answered once, whichever instance the
 * agent waits on. Twenty requests race at once, to make a lost update show.
 */
import { describe, expect, it } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import type { RequestRecord } from "../../../src/requests/model.js";
import type { Person } from "../../../src/protocol/request-view.js";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { ALICE, CAROL } from "../../fixtures/people.js";
import { onPosts, useRelaysOnRedis } from "../../helpers/redis-relays.js";
import { hasNoButtons, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction } from "../../helpers/slack.js";

const RACES = 20;
const input = { command: "make deploy" };
const routes = [Route.parse({ match: { kind: "permission" }, approvers: { users: [ALICE.id, CAROL.id] }, quorum: 2 })];

const relays = useRelaysOnRedis();

/** Two instances; every Web API call either makes is scripted on the first (they share one Slack script), each post getting its own ts. */
async function twoInstances(): Promise<[SlackRelay, SlackRelay]> {
  const a = await relays.start({ routes });
  const b = await relays.start({ routes });
  onPosts(a.api, RACES)
    .on("chat.update", { ok: true }, RACES * 4)
    .on("chat.postEphemeral", { ok: true }, RACES * 4);
  return [a, b];
}

async function requests(on: SlackRelay): Promise<RequestRecord[]> {
  return Promise.all(Array.from({ length: RACES }, () => on.create({ kind: "permission", toolName: "Bash", input })));
}

/** The click of Allow on the request's message, as Slack sends it to `relay`. */
function allow(relay: SlackRelay, record: RequestRecord, user: Person) {
  return relay.post(blockAction({ actionId: Action.allow, value: encodeButton({ r: record.id }), user, ts: record.slack!.ts }));
}

const ephemerals = (relay: SlackRelay) => relay.api.callsTo("chat.postEphemeral").map((call) => call.args.text);

describe("a quorum of two across two instances on one Redis", () => {
  it("when two approvers click Allow at the same moment on different instances, each request is answered once with both approvals", async () => {
    const [a, b] = await twoInstances();
    const records = await requests(a);
    // The agents wait on either instance: on the one a click lands on, or the other.
    const waits = records.map((record, i) => [a, b][i % 2]!.service.wait(record.id, 10_000));
    const clicks = await Promise.all(records.map((record) => Promise.all([allow(a, record, ALICE), allow(b, record, CAROL)])));
    expect(clicks.flat().map((click) => click.status)).toEqual(Array(RACES * 2).fill(200));

    const answered = await Promise.all(waits);
    await a.settle();
    await b.settle();
    for (const [i, record] of records.entries()) {
      expect(answered[i]).toMatchObject({ status: "answered", decision: { behavior: "allow", updatedInput: input } });
      expect(answered[i]!.approvals!.map((approval) => approval.person.id).sort()).toEqual([ALICE.id, CAROL.id]);
      expect(await b.service.get(record.id)).toStrictEqual(answered[i]);
      const updates = a.api.callsTo("chat.update").filter((call) => call.args.ts === record.slack!.ts);
      const last = JSON.stringify(updates.at(-1)?.args.blocks);
      expect(last).toContain("Approvals 2 of 2");
      expect(last).toContain(`<@${ALICE.id}>`);
      expect(last).toContain(`<@${CAROL.id}>`);
      expect(hasNoButtons(updates.at(-1)?.args.blocks)).toBe(true);
    }
    // Of each pair, one click counted (and was told so) and the other answered the request (its message says so).
    expect(ephemerals(a)).toEqual(Array(RACES).fill("Your approval counted: 1 of 2. Waiting for 1 more."));
  });

  it("when the same approver clicks Allow on both instances at once, one click counts, the other is a duplicate, and the request waits on", async () => {
    const [a, b] = await twoInstances();
    const records = await requests(a);
    const agentsLeave = new AbortController();
    let woken = 0;
    const waits = records.map((record, i) =>
      [a, b][i % 2]!.service.wait(record.id, 30_000, agentsLeave.signal).finally(() => {
        woken += 1;
      }),
    );
    await Promise.all(records.map((record) => Promise.all([allow(a, record, ALICE), allow(b, record, ALICE)])));
    await a.settle();
    await b.settle();

    // No agent was answered: each long-poll holds until its agent leaves, then returns the request still pending.
    expect(woken).toBe(0);
    agentsLeave.abort();
    for (const waited of await Promise.all(waits)) {
      expect(waited).toMatchObject({ status: "pending", approvals: [{ person: { id: ALICE.id } }] });
      expect(waited!.approvals).toHaveLength(1);
    }
    const told = ephemerals(a);
    expect(told.filter((text) => text === "Your approval counted: 1 of 2. Waiting for 1 more.")).toHaveLength(RACES);
    expect(told.filter((text) => text === "You already approved this request (1 of 2).")).toHaveLength(RACES);
    expect(told).toHaveLength(RACES * 2);
  });
});
