/**
 * "Allow for 15 min" (docs/architecture.md §7) through the real Bolt HTTP receiver with
 * signed clicks: the click answers like Allow / Yes and creates the rule,
 * the clicker alone is told its scope and end, the next calls of the same
 * session and tool are answered without a post and counted in the original
 * message's thread (one reply, rewritten); a refused click and a click on an
 * ended request change nothing and tell the person why.
 */
import { describe, expect, it } from "vitest";
import type { AuditEntry } from "../../../src/requests/audit.js";
import { Action } from "../../../src/slack/ids.js";
import { ALICE, BOB } from "../../fixtures/people.js";
import { approverRoutes, ONLY_ALICE_AND_ONCALL } from "../../fixtures/routes.js";
import { clickAs, ephemerals, watchAgent } from "../../helpers/slack-approvers.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { CHANNEL, MESSAGE_TS } from "../../helpers/slack.js";

const SESSION = { name: "claude-code", sessionId: "5f1c2a9e-0b7d-4c1e-9a55-3f0e8f7d2c11" };
const TALLY_TS = "1700000000.000900";
const permission = (command: string) => ({ kind: "permission", toolName: "Bash", input: { command }, agent: SESSION });
const stepGate = (command: string) => ({ kind: "step_gate", toolName: "Bash", input: { command }, agent: SESSION });

let relay: SlackRelay;
const audited: AuditEntry[] = [];
useSlackRelay(
  (started) => {
    relay = started;
    audited.length = 0;
  },
  { routes: approverRoutes, audit: { record: (entry) => audited.push(entry) } },
);

const rules = () => relay.service.rules!.list({ limit: 10 });
/** The `<!date^…>` token of a rule's end, as the texts write it. */
const until = (ms: number) => `<!date^${Math.floor(ms / 1000)}^{time}|${new Date(ms).toISOString().slice(11, 16)} UTC>`;
const threadPosts = () => relay.api.callsTo("chat.postMessage").filter((call) => call.args.thread_ts !== undefined);
const messagePosts = () => relay.api.callsTo("chat.postMessage").filter((call) => call.args.thread_ts === undefined);

describe("a click on Allow for 15 min", () => {
  it("allows the call as asked, creates the rule and tells only the clicker its scope, end and how to revoke it", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission("npm test"));
    const agent = watchAgent(relay, record.id);
    await clickAs(relay, Action.allowForAWhile, record.id, ALICE);
    expect((await agent.answer)?.decision).toStrictEqual({ behavior: "allow", updatedInput: { command: "npm test" } });
    const [rule] = await rules();
    expect(rule).toMatchObject({ token: "ci-bot", sessionId: SESSION.sessionId, toolName: "Bash", createdBy: { id: ALICE.id }, requestId: record.id, uses: 0 });
    expect(rule!.expiresAt - rule!.createdAt).toBe(15 * 60_000);
    expect(ephemerals(relay)).toStrictEqual([
      {
        channel: CHANNEL,
        user: ALICE.id,
        text:
          `⏱️ Allowed, and for the next 15 min (until ${until(rule!.expiresAt)}) every Bash call of this agent session is allowed without asking; ` +
          `each is counted in this thread. Revoke the rule in the relay's App Home tab or with \`DELETE /v1/rules/${rule!.id}\`.`,
      },
    ]);
    const update = relay.api.callsTo("chat.update")[0]!.args;
    expect(JSON.stringify(update.blocks)).toContain("Allowed by <@U0ALICE01>");
    expect(audited.map((entry) => entry.type)).toContain("rule_created");
    relay.api.done();
  });

  it("on a step gate answers y and creates the rule", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(stepGate("ls"));
    await clickAs(relay, Action.allowForAWhile, record.id, ALICE);
    expect((await relay.service.get(record.id))?.decision).toStrictEqual({ reply: "y" });
    expect((await rules()).map((rule) => rule.requestId)).toStrictEqual([record.id]);
    relay.api.done();
  });

  it("from someone who may not answer is refused like any answer: told who may, audited, nothing answered and no rule", async () => {
    relay.api.onPost().on("usergroups.users.list", { ok: true, users: [] }).on("chat.postEphemeral");
    const record = await relay.create(permission("npm test"));
    const agent = watchAgent(relay, record.id);
    await clickAs(relay, Action.allowForAWhile, record.id, BOB);
    expect(ephemerals(relay)).toStrictEqual([{ channel: CHANNEL, user: BOB.id, text: ONLY_ALICE_AND_ONCALL }]);
    expect(await agent.stillWaiting()).toBe(true);
    expect(await rules()).toStrictEqual([]);
    expect(relay.api.callsTo("chat.update")).toStrictEqual([]);
    expect(audited.filter((entry) => entry.type === "refused")).toMatchObject([{ person: { id: BOB.id }, reason: "not an approver of this request" }]);
    relay.api.done();
  });

  it("on an ended request changes nothing, creates no rule and tells the person how it ended", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission("npm test"));
    await clickAs(relay, Action.deny, record.id, ALICE);
    await clickAs(relay, Action.allowForAWhile, record.id, ALICE);
    expect((await relay.service.get(record.id))?.decision).toMatchObject({ behavior: "deny" });
    expect(await rules()).toStrictEqual([]);
    expect(ephemerals(relay)).toStrictEqual([{ channel: CHANNEL, user: ALICE.id, text: "This request was already answered: ❌ Denied by <@U0ALICE01>" }]);
    relay.api.done();
  });
});

describe("calls under the rule", () => {
  it("are allowed at once without a post, and counted in one thread reply under the original message, rewritten at each use", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission("npm test"));
    await clickAs(relay, Action.allowForAWhile, record.id, ALICE);
    const [rule] = await rules();
    relay.api.onPost(TALLY_TS).on("chat.update", { ok: true }, 2);

    const next = await relay.create(permission("git status"));
    expect(next).toMatchObject({ status: "answered", decision: { behavior: "allow", updatedInput: { command: "git status" } }, answeredBy: ALICE });
    await relay.create(permission("git diff"));
    await relay.create(stepGate("ls"));

    expect(messagePosts()).toHaveLength(1);
    const tally = (n: number, calls: string) => `🔁 Auto-approved ${n} more Bash ${calls} under <@${ALICE.id}>'s rule · until ${until(rule!.expiresAt)}`;
    expect(threadPosts().map((call) => call.args)).toStrictEqual([
      { channel: CHANNEL, thread_ts: MESSAGE_TS, text: tally(1, "call"), unfurl_links: "false", unfurl_media: "false" },
    ]);
    const rewrites = relay.api.callsTo("chat.update").slice(1);
    expect(rewrites.map((call) => call.args)).toStrictEqual([
      { channel: CHANNEL, ts: TALLY_TS, text: tally(2, "calls") },
      { channel: CHANNEL, ts: TALLY_TS, text: tally(3, "calls") },
    ]);
    expect((await rules())[0]).toMatchObject({ uses: 3, tallyTs: TALLY_TS });
    expect(audited.filter((entry) => entry.type === "rule_used")).toHaveLength(3);
    relay.api.done();
  });

  it("of another session or tool are posted and wait for a person", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission("npm test"));
    await clickAs(relay, Action.allowForAWhile, record.id, ALICE);
    relay.api.onPost(MESSAGE_TS, CHANNEL, 2);
    const otherSession = await relay.create({ ...permission("npm test"), agent: { ...SESSION, sessionId: "another-session" } });
    const otherTool = await relay.create({ kind: "permission", toolName: "Write", input: { file_path: "/tmp/x" }, agent: SESSION });
    expect([otherSession.status, otherTool.status]).toStrictEqual(["pending", "pending"]);
    expect(messagePosts()).toHaveLength(3);
    expect(threadPosts()).toStrictEqual([]);
    relay.api.done();
  });

  it("are asked about again once the rule's time is up", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission("npm test"));
    await clickAs(relay, Action.allowForAWhile, record.id, ALICE);
    relay.advance(15 * 60_000);
    relay.api.onPost();
    expect((await relay.create(permission("npm test"))).status).toBe("pending");
    relay.api.done();
  });

  it("keep their answer when the tally cannot be posted; a later use posts it once the first poster's lease ran out", async () => {
    relay.api.onPost().on("chat.update").on("chat.postEphemeral");
    const record = await relay.create(permission("npm test"));
    await clickAs(relay, Action.allowForAWhile, record.id, ALICE);
    relay.api.on("chat.postMessage", { ok: false, error: "channel_not_found" });
    expect((await relay.create(permission("a"))).status).toBe("answered");
    expect((await relay.create(permission("b"))).status).toBe("answered");
    relay.advance(31_000);
    relay.api.onPost(TALLY_TS);
    expect((await relay.create(permission("c"))).status).toBe("answered");
    expect(threadPosts().map((call) => /Auto-approved (\d+) more/.exec(String(call.args.text))?.[1])).toStrictEqual(["1", "3"]);
    relay.api.done();
  });
});
