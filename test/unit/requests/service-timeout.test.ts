/**
 * RequestService when nobody answers (docs/architecture.md §7, a route's onTimeout), on
 * the memory store with the fake messenger: under `halt` the expiry carries
 * the decision that stops the agent, whether the sweep or a read expires
 * the request, and the waiting agent, the message and the audit trail see
 * it; elsewhere an expiry carries none.
 */
import { describe, expect, it, vi } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import type { AuditEntry } from "../../../src/requests/audit.js";
import { endedMessage } from "../../../src/slack/blocks/index.js";
import { ALLOW, bodyOf, flush, T0, useHarness } from "../../helpers/service-harness.js";
import { ALICE } from "../../fixtures/people.js";

const HALT_ROUTE = Route.parse({ match: { token: "deploy-bot" }, onTimeout: "halt", timeoutSeconds: 60 });
const gate = { kind: "step_gate", toolName: "Bash", input: { command: "make deploy" } };
const question = { kind: "interactive_questions", questions: [{ id: "go", question: "Go?", type: "confirm" }] };

let audited: AuditEntry[];
const h = useHarness(() => {
  audited = [];
  return { routes: [HALT_ROUTE], audit: { record: (entry) => audited.push(entry) } };
});

async function create(tokenName: string, fields: Record<string, unknown> = {}): Promise<string> {
  const { record } = await h.service.create({ tokenName, body: bodyOf(fields) });
  await h.service.idle();
  return record.id;
}

describe("expiry under onTimeout: halt", () => {
  it("the sweep expires a step gate with q, the waiting agent gets it, and the message says the agent was stopped", async () => {
    const id = await create("deploy-bot", gate);
    const waiting = h.service.wait(id, 120_000);
    await flush();
    vi.setSystemTime(T0 + 60_000);
    expect(await h.service.expireDue()).toBe(1);
    expect(await waiting).toMatchObject({ status: "expired", decision: { reply: "q" } });
    await h.service.idle();
    expect(h.messenger.ended.map((record) => record.decision)).toStrictEqual([{ reply: "q" }]);
    expect(JSON.stringify(endedMessage(h.messenger.ended[0]!).blocks)).toContain("Expired: no one answered in time, so the agent was stopped");
  });

  it("a read past the deadline expires a permission request with a deny that interrupts", async () => {
    const id = await create("deploy-bot");
    vi.setSystemTime(T0 + 60_000);
    expect(await h.service.getExpiringIfOverdue(id)).toMatchObject({
      status: "expired",
      decision: {
        behavior: "deny",
        message: "No one answered in Slack within 1 minute, so the tool call was denied and the agent was stopped.",
        interrupt: true,
      },
    });
  });

  it("the audit trail's expired event gives the decision as its reason", async () => {
    const id = await create("deploy-bot", gate);
    vi.setSystemTime(T0 + 60_000);
    await h.service.expireDue();
    expect(audited.find((entry) => entry.type === "expired")).toMatchObject({ requestId: id, status: "expired", reason: "onTimeout halt: Stopped (q)" });
  });

  it("a question expires with no decision, as it would anywhere", async () => {
    const id = await create("deploy-bot", question);
    vi.setSystemTime(T0 + 60_000);
    await h.service.expireDue();
    const expired = await h.service.get(id);
    expect(expired?.status).toBe("expired");
    expect(expired?.decision).toBeUndefined();
  });

  it("an answer before the deadline wins: a later sweep changes nothing", async () => {
    const id = await create("deploy-bot");
    await h.service.answer(id, ALLOW, ALICE);
    vi.setSystemTime(T0 + 60_000);
    expect(await h.service.expireDue()).toBe(0);
    expect(await h.service.get(id)).toMatchObject({ status: "answered", decision: ALLOW });
  });
});

describe("expiry elsewhere (onTimeout: deny, the default)", () => {
  it("a step gate of another route expires with no decision", async () => {
    const id = await create("laptop", gate);
    vi.setSystemTime(T0 + 600_000);
    await h.service.expireDue();
    await flush();
    const expired = await h.service.get(id);
    expect(expired).toMatchObject({ status: "expired" });
    expect(expired?.decision).toBeUndefined();
    expect(audited.find((entry) => entry.type === "expired")?.reason).toBeUndefined();
  });
});
