/**
 * HookCalls on a real RequestService (memory store, fake messenger): what
 * shutdown does to held Claude Code hook calls, without HTTP. The rest of the
 * flow (joins, deadlines, disconnects) is tested through the route in
 * test/integration/hooks/endpoint.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { statusOf } from "../../../../src/http/errors.js";
import { RelayError } from "../../../../src/requests/errors.js";
import { DRAINING_DENY, HookCalls, SHUTDOWN_REASON, type HookCall } from "../../../../src/requests/hooks/calls.js";
import { parseHookInput } from "../../../../src/requests/hooks/input.js";
import { RequestService } from "../../../../src/requests/service.js";
import { createMemoryStore } from "../../../../src/store/memory-store.js";
import { FakeMessenger } from "../../../helpers/fake-messenger.js";
import { hookFixture } from "../../../fixtures/claude-code.js";
import { until } from "../../../helpers/until.js";
import { ALICE } from "../../../fixtures/people.js";

const services: RequestService[] = [];
afterEach(() => {
  while (services.length > 0) services.pop()!.close();
});

function setup() {
  const store = createMemoryStore();
  const messenger = new FakeMessenger();
  const service = new RequestService({ store, messenger, defaultChannel: "C0123456789", defaultTimeoutSeconds: 600 });
  services.push(service);
  return { service, messenger, hookCalls: new HookCalls({ service }) };
}

function call(over: Partial<HookCall> = {}): HookCall {
  return {
    agent: "ci-bot",
    input: parseHookInput(hookFixture("pre-tool-use")),
    timeoutSeconds: 600,
    startedAt: Date.now(),
    gone: new AbortController().signal,
    reference: "req-1",
    ...over,
  };
}

const shutdownDeny = {
  hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: `${SHUTDOWN_REASON}, so the tool call was denied.` },
};

describe("when the relay shuts down", () => {
  it("a held hook call is denied at once and its request cancelled with the reason, before close() resolves", async () => {
    const { service, messenger, hookCalls } = setup();
    const answer = hookCalls.answer(call());
    await until(() => service.waiting === 1);
    await hookCalls.close();
    expect(await answer).toEqual(shutdownDeny);
    const id = messenger.posts[0]!.id;
    expect(await service.get(id)).toMatchObject({ status: "cancelled", cancelledBy: "relay", error: SHUTDOWN_REASON });
  });

  it("a held hook call whose request is answered just before the shutdown cancel gets that answer, as Slack shows it", async () => {
    const { service, messenger, hookCalls } = setup();
    const answer = hookCalls.answer(call());
    await until(() => service.waiting === 1);
    await service.idle();
    const id = messenger.posts[0]!.id;
    // A click on another instance lands between the end of the hold and the cancel.
    const cancel = service.cancel.bind(service);
    service.cancel = async (...args) => {
      await service.answer(id, { reply: "y" }, ALICE);
      return cancel(...args);
    };
    await hookCalls.close();
    expect(await answer).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
    expect(await service.get(id)).toMatchObject({ status: "answered" });
  });

  it("a hook call arriving after close() is denied without asking anyone", async () => {
    const { service, messenger, hookCalls } = setup();
    await hookCalls.close();
    expect(await hookCalls.answer(call())).toEqual(shutdownDeny);
    await service.idle();
    expect(messenger.posts).toEqual([]);
  });
});

describe("while the relay drains before shutting down", () => {
  it("a new hook call is denied with 'restarting' without asking anyone", async () => {
    const { service, messenger, hookCalls } = setup();
    service.drain();
    expect(await hookCalls.answer(call())).toEqual({
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: DRAINING_DENY },
    });
    await service.idle();
    expect(messenger.posts).toEqual([]);
  });

  it("a new hook call from a caller that retries unavailable relays is refused with relay_shutting_down (503), nothing created", async () => {
    const { service, messenger, hookCalls } = setup();
    service.drain();
    const refused = (() => {
      try {
        void hookCalls.answer(call({ retriesUnavailable: true }));
      } catch (error) {
        return error as RelayError;
      }
      throw new Error("the hook call was not refused");
    })();
    expect(refused).toBeInstanceOf(RelayError);
    expect({ code: refused.code, status: statusOf(refused.code) }).toEqual({ code: "relay_shutting_down", status: 503 });
    await service.idle();
    expect(messenger.posts).toEqual([]);
  });

  it("a hook call held before the drain is still answered by the person", async () => {
    const { service, messenger, hookCalls } = setup();
    const answer = hookCalls.answer(call());
    await until(() => service.waiting === 1);
    service.drain();
    expect(hookCalls.held).toBe(1);
    await service.idle();
    await service.answer(messenger.posts[0]!.id, { reply: "y" }, ALICE);
    expect(await answer).toEqual({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } });
    expect(hookCalls.held).toBe(0);
  });
});

describe("when no one answers before the request's deadline", () => {
  it("a hold that read the request just before its expiry was written expires it, and the call gets the no-one-answered deny, not a late cancel", async () => {
    const { service, messenger, hookCalls } = setup();
    // A busy event loop fires the hold's timer a little early: its last read sees the request pending, and by the time the hold ends the deadline has passed.
    service.wait = async (id, waitMs) => {
      const read = await service.get(id);
      await new Promise((resolve) => setTimeout(resolve, waitMs + 20));
      return read;
    };
    const answer = await hookCalls.answer(call({ timeoutSeconds: 3 }));
    expect(answer).toEqual({
      hookSpecificOutput: {
        hookEventName: "PreToolUse",
        permissionDecision: "deny",
        permissionDecisionReason: "No one answered in Slack within 1 second, so the tool call was denied.",
      },
    });
    expect(await service.get(messenger.posts[0]!.id)).toMatchObject({ status: "expired" });
  });
});
