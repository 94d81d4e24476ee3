/**
 * "Allow for a while" across relay instances (docs/architecture.md §7): two instances,
 * each with the real Bolt receiver and its own connections, on one real
 * Redis. A rule created by a click that Slack delivered to one instance
 * answers the requests that arrive on the other; the thread counts every
 * use, from both, in one reply; a revoke or the rule's end on one stops it
 * on both.
 */
import { describe, expect, it } from "vitest";
import { Action, encodeButton } from "../../../src/slack/ids.js";
import { ALICE } from "../../fixtures/people.js";
import { onPosts, useRelaysOnRedis } from "../../helpers/redis-relays.js";
import type { SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction } from "../../helpers/slack.js";

const SESSION = { name: "claude-code", sessionId: "5f1c2a9e-0b7d-4c1e-9a55-3f0e8f7d2c11" };
const bash = (command: string) => ({ kind: "permission", toolName: "Bash", input: { command }, agent: SESSION });
const USES = 10;

const relays = useRelaysOnRedis();

/** Two instances; Alice's "Allow for 15 min" on a request posted by the first, clicked on the second. */
async function ruleOnTwoInstances(): Promise<[SlackRelay, SlackRelay]> {
  const a = await relays.start();
  const b = await relays.start();
  onPosts(a.api, 10)
    .on("chat.update", { ok: true }, 4 * USES)
    .on("chat.postEphemeral", { ok: true }, 2);
  const origin = await a.create(bash("npm test"));
  const click = await b.post(blockAction({ actionId: Action.allowForAWhile, value: encodeButton({ r: origin.id }), user: ALICE, ts: origin.slack!.ts }));
  expect(click.status).toBe(200);
  await b.settle();
  expect((await a.service.get(origin.id))?.status).toBe("answered");
  return [a, b];
}

const requestPosts = (relay: SlackRelay) => relay.api.callsTo("chat.postMessage").filter((call) => call.args.thread_ts === undefined);
const threadPosts = (relay: SlackRelay) => relay.api.callsTo("chat.postMessage").filter((call) => call.args.thread_ts !== undefined);

describe("a rule on two instances sharing Redis", () => {
  it("created by a click on one instance, it answers the session's requests arriving on the other, without a post", async () => {
    const [a] = await ruleOnTwoInstances();
    const next = await a.create(bash("git status"));
    expect(next).toMatchObject({ status: "answered", decision: { behavior: "allow", updatedInput: { command: "git status" } }, answeredBy: { id: ALICE.id } });
    expect(requestPosts(a)).toHaveLength(1);
    expect((await a.service.rules!.list({ limit: 10 }))[0]?.uses).toBe(1);
  });

  it("counts every use from both instances at once, in one thread reply that ends showing them all", async () => {
    const [a, b] = await ruleOnTwoInstances();
    const created = await Promise.all(Array.from({ length: USES }, (_, i) => [a, b][i % 2]!.create(bash(`echo ${i}`))));
    expect(created.every((record) => record.status === "answered")).toBe(true);
    await a.settle();
    await b.settle();
    expect(requestPosts(a)).toHaveLength(1);
    expect(threadPosts(a)).toHaveLength(1);
    const [rule] = await b.service.rules!.list({ limit: 10 });
    expect(rule?.uses).toBe(USES);
    const rewrites = a.api.callsTo("chat.update").filter((call) => call.args.ts === rule!.tallyTs);
    const texts = [...threadPosts(a), ...rewrites].map((call) => String(call.args.text));
    expect(texts.at(-1)).toContain(`Auto-approved ${USES} more Bash calls`);
  });

  it("revoked on one instance, it answers nothing on the other", async () => {
    const [a, b] = await ruleOnTwoInstances();
    const [rule] = await a.service.rules!.list({ limit: 10 });
    expect((await a.service.rules!.revoke(rule!.id, { token: "ops" }))?.id).toBe(rule!.id);
    expect((await b.create(bash("git status"))).status).toBe("pending");
    expect(await b.service.rules!.list({ limit: 10 })).toStrictEqual([]);
  });

  it("past its time on one instance's clock, it answers nothing there", async () => {
    const [a, b] = await ruleOnTwoInstances();
    b.advance(15 * 60_000);
    expect((await b.create(bash("git status"))).status).toBe("pending");
    expect((await a.create(bash("git diff"))).status).toBe("answered");
  });
});
