import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RelayClient } from "../../../src/client/relay-client.js";
import { RelayClientError } from "../../../src/client/errors.js";
import type { RelayClientOptions } from "../../../src/client/types.js";
import { error, RelayStandIn, TOKEN, view, type Call, type Reply } from "../../helpers/relay-stand-in.js";
import { until } from "../../helpers/until.js";

const confirm = { kind: "interactive_questions" as const, questions: [{ id: "go", question: "Go?", type: "confirm" as const }] };

let relay: RelayStandIn;
beforeEach(async () => {
  relay = await new RelayStandIn().start();
});
afterEach(async () => {
  await relay.stop();
});

function client(overrides: Partial<RelayClientOptions> = {}): RelayClient {
  return new RelayClient({ url: relay.url, token: TOKEN, maxWaitSeconds: 1, initialRetryDelayMs: 20, maxRetryDelayMs: 100, ...overrides });
}

/** Fails the first `count` calls matching `filter` with `reply`, then lets the stand-in answer. */
function failFirst(count: number, filter: (call: Call) => boolean, reply: Reply) {
  let left = count;
  relay.fault = (call) => {
    if (!filter(call) || left === 0) return undefined;
    left -= 1;
    return reply;
  };
}
const isGet = (call: Call) => call.method === "GET";
const isPost = (call: Call) => call.method === "POST";

describe("RelayClient.request", () => {
  it("when a request is created, it is POSTed with the bearer token and an idempotency key and the 201 reply comes back", async () => {
    const created = await client().request(confirm);
    expect(created).toMatchObject({ id: "r1", status: "pending" });
    const [call] = relay.callsTo("POST", "/v1/requests");
    expect(call!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(call!.headers["content-type"]).toBe("application/json");
    expect(call!.headers["idempotency-key"]).toMatch(/\S+/);
    expect(JSON.parse(call!.text)).toEqual(confirm);
  });

  it("when the relay's URL ends in a slash, the paths are still right", async () => {
    await client({ url: `${relay.url}/` }).request(confirm);
    expect(relay.callsTo("POST", "/v1/requests")).toHaveLength(1);
  });

  it("when the body is refused with a 400, the error carries the relay's code, status and details and is not retried", async () => {
    relay.fault = () => error(400, "relay_invalid_request", "Invalid request: toolName: Required", [{ path: "toolName", message: "Required" }]);
    const failure = await client()
      .request(confirm)
      .catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(RelayClientError);
    expect(failure).toMatchObject({ code: "relay_invalid_request", status: 400, details: [{ path: "toolName", message: "Required" }] });
    expect(relay.calls).toHaveLength(1);
  });

  it("when the token is wrong, it fails with relay_unauthorized at once, without retrying", async () => {
    const failure = await client({ token: "wrong-token-000000000" })
      .request(confirm)
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: "RelayClientError", code: "relay_unauthorized", status: 401 });
    expect(relay.calls).toHaveLength(1);
  });

  it("when the relay stays unreachable, it gives up after the allowed retries with relay_unreachable", async () => {
    await relay.stop();
    const failure = await client({ retries: 2 })
      .request(confirm)
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: "RelayClientError", code: "relay_unreachable" });
    expect((failure as Error).message).toMatch(/ECONNREFUSED/);
  });

  it("when the relay asks to retry later (429 with Retry-After), the next try waits that long", async () => {
    failFirst(1, isPost, { status: 429, json: {}, headers: { "retry-after": "3" } });
    const delays: number[] = [];
    await client({ sleep: async (ms) => void delays.push(ms) }).request(confirm);
    expect(delays).toEqual([3000]);
  });

  it("when the token is at its pending cap or over its create rate (429 with the relay's code), it fails at once with the code, details and Retry-After", async () => {
    for (const [code, details] of [
      ["relay_too_many_pending", { pending: 200, limit: 200 }],
      ["relay_rate_limited", { limitPerMinute: 600, retryAfterSeconds: 12 }],
    ] as const) {
      relay.calls.length = 0;
      relay.fault = () => ({ ...error(429, code, "This agent token already has 200 pending requests", details), headers: { "retry-after": "12" } });
      const failure = await client({ sleep: async () => {} })
        .request(confirm)
        .catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(RelayClientError);
      expect(failure).toMatchObject({ code, status: 429, details, retryAfterMs: 12_000 });
      expect(relay.calls).toHaveLength(1);
    }
  });
});

describe("RelayClient.wait", () => {
  it("when the request stays pending over several long-polls, it keeps polling until the answer", async () => {
    const { id } = await client().request(confirm);
    let polls = 0;
    relay.fault = (call) => {
      if (!isGet(call)) return undefined;
      polls += 1;
      if (polls < 4) return { status: 200, json: view(relay.requests.get(id)!) };
      relay.answer(id, { answers: { go: true } });
      return undefined;
    };
    const result = await client().wait(id);
    expect(result).toMatchObject({ id, status: "answered", decision: { answers: { go: true } } });
    expect(relay.callsTo("GET", `/v1/requests/${id}`)).toHaveLength(4);
    expect(relay.calls.filter(isGet).every((c) => c.query.get("wait") === "1")).toBe(true);
  });

  it("when the relay restarts in the middle of a long-poll, the wait carries on and returns the answer given afterwards", async () => {
    const { id } = await client().request(confirm);
    const waiting = client({ maxWaitSeconds: 30 }).wait(id);
    await until(() => relay.calls.some(isGet));
    await relay.restart(300);
    await until(() => relay.calls.filter(isGet).length >= 2);
    relay.answer(id, { answers: { go: false } });
    await expect(waiting).resolves.toMatchObject({ status: "answered", decision: { answers: { go: false } } });
  });

  it("when the relay answers 503, 502, invalid JSON, the wrong shape or drops the connection, the wait retries through all of them", async () => {
    const { id } = await client().request(confirm);
    relay.answer(id, { answers: { go: true } });
    const faults = [
      { status: 503, json: { error: { code: "relay_not_ready", message: "store down" } } },
      { status: 502, text: "<html>Bad gateway</html>" },
      { status: 200, text: "{not json" },
      { status: 200, json: { hello: "world" } },
      { status: 0, destroy: true },
      { status: 504, text: "" },
    ];
    relay.fault = (call) => (isGet(call) ? faults.shift() : undefined);
    await expect(client().wait(id)).resolves.toMatchObject({ status: "answered" });
    expect(faults).toHaveLength(0);
  });

  it("when the signal aborts, the wait stops with an AbortError and polls no more", async () => {
    const { id } = await client().request(confirm);
    const controller = new AbortController();
    const waiting = client({ maxWaitSeconds: 30 }).wait(id, { signal: controller.signal });
    await until(() => relay.calls.some(isGet));
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    const polls = relay.calls.filter(isGet).length;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(relay.calls.filter(isGet)).toHaveLength(polls);
  });

  it("when the signal aborts while the relay is down, the backoff is cut short", async () => {
    const { id } = await client().request(confirm);
    await relay.stop();
    const controller = new AbortController();
    const waiting = client({ initialRetryDelayMs: 60_000, maxRetryDelayMs: 60_000 }).wait(id, { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
  });

  it("when the request is unknown (404), it fails with relay_not_found without retrying", async () => {
    const failure = await client()
      .wait("nope")
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "relay_not_found", status: 404 });
    expect(relay.calls).toHaveLength(1);
  });

  it("when the token is refused (401), it fails with relay_unauthorized without retrying", async () => {
    const failure = await client({ token: "another-token-00000000" })
      .wait("r1")
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "relay_unauthorized", status: 401 });
    expect(relay.calls).toHaveLength(1);
  });

  it("when a person gave the request more time, the wait follows the moved deadline: an outage past the one it was given does not end it", async () => {
    const { id, expiresAt } = await client().request(confirm);
    const stored = relay.requests.get(id)!;
    stored.expiresAt = Date.parse(expiresAt) + 30 * 60_000;
    const failures = 8;
    let polls = 0;
    relay.fault = (call) => {
      if (!isGet(call)) return undefined;
      polls += 1;
      if (polls === 1) return { status: 200, json: view(stored) };
      if (polls <= 1 + failures) return { status: 503, json: { error: { code: "relay_store_unavailable", message: "store down" } } };
      relay.answer(id, { answers: { go: true } });
      return undefined;
    };
    // The deadline the caller was given has passed well beyond the grace: only the moved one keeps the wait going.
    const given = new Date(Date.now() - 60_000).toISOString();
    const result = await client({ unreachableGraceMs: 100 }).wait(id, { expiresAt: given });
    expect(result).toMatchObject({ status: "answered", decision: { answers: { go: true } } });
    expect(polls).toBe(failures + 2);
  });

  it("when the relay stays unreachable long past the request's deadline, the wait gives up with relay_unreachable", async () => {
    await relay.stop();
    const failure = await client({ unreachableGraceMs: 100 })
      .wait("r1", { expiresAt: new Date(Date.now() - 1000).toISOString() })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "relay_unreachable" });
  });
});

describe("RelayClient.ask and cancel", () => {
  it("when a POST reply is lost and retried, every try carries the same idempotency key and one request is created", async () => {
    let posts = 0;
    relay.fault = (call) => {
      if (!isPost(call)) return undefined;
      posts += 1;
      if (posts === 1) return "lose";
      if (posts === 2) return { status: 503, json: {} };
      return undefined;
    };
    const asking = client().ask(confirm);
    const created = await relay.nextRequest().then(async (r) => {
      await until(() => posts >= 3);
      return r;
    });
    relay.answer(created.id, { answers: { go: true } });
    await expect(asking).resolves.toMatchObject({ id: created.id, status: "answered" });
    const keys = relay.callsTo("POST", "/v1/requests").map((c) => c.headers["idempotency-key"]);
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
    expect(relay.requests.size).toBe(1);
  });

  describe("with freshWhenEnded", () => {
    const ended = {
      id: "r-old",
      kind: "interactive_questions",
      status: "answered",
      createdAt: "2026-01-01T00:00:00.000Z",
      expiresAt: "2026-01-01T01:00:00.000Z",
    };

    it("when every numbered key names an ended request, it gives up after key#100 with relay_keys_used_up, asking nothing", async () => {
      relay.fault = (call) => (isPost(call) ? { status: 200, json: ended } : undefined);
      const passed: string[] = [];
      const asking = client().ask({ ...confirm, idempotencyKey: "gate" }, { freshWhenEnded: true, onPassedOver: ({ key }) => passed.push(key) });
      await expect(asking).rejects.toMatchObject({ code: "relay_keys_used_up" });
      expect(passed).toHaveLength(100);
      expect(passed.slice(0, 3)).toEqual(["gate", "gate#2", "gate#3"]);
      expect(passed.at(-1)).toBe("gate#100");
      expect(relay.calls.filter(isGet)).toHaveLength(0);
    });

    it("when the relay refuses the create for another reason than the key's body, that refusal is thrown, not passed over", async () => {
      relay.fault = (call) => (isPost(call) ? error(400, "relay_invalid_request", "Bad body.") : undefined);
      const passed: unknown[] = [];
      const asking = client().ask({ ...confirm, idempotencyKey: "gate" }, { freshWhenEnded: true, onPassedOver: (p) => passed.push(p) });
      await expect(asking).rejects.toMatchObject({ code: "relay_invalid_request" });
      expect(passed).toEqual([]);
      expect(relay.callsTo("POST", "/v1/requests")).toHaveLength(1);
    });

    it("when the relay answered the create at once (201, answered), that answer is kept, not passed over", async () => {
      relay.fault = (call) => (isPost(call) ? { status: 201, json: { ...ended, decision: { answers: { go: true } } } } : undefined);
      const passed: unknown[] = [];
      const view = await client().ask({ ...confirm, idempotencyKey: "gate" }, { freshWhenEnded: true, onPassedOver: (p) => passed.push(p) });
      expect(view).toMatchObject({ id: "r-old", status: "answered" });
      expect(passed).toEqual([]);
    });
  });

  it("when the body names its own idempotency key, that key is the one sent", async () => {
    await client().request({ ...confirm, idempotencyKey: "deploy-42" });
    expect(relay.calls[0]!.headers["idempotency-key"]).toBe("deploy-42");
  });

  it("when the relay answers the POST at once with the whole request, no long-poll follows", async () => {
    relay.fault = (call) => {
      if (!isPost(call)) return undefined;
      const now = Date.now();
      return {
        status: 201,
        json: view({
          id: "r9",
          body: confirm,
          idempotencyKey: undefined,
          status: "answered",
          createdAt: now,
          expiresAt: now,
          decision: { answers: { go: true } },
        }),
      };
    };
    await expect(client().ask(confirm)).resolves.toMatchObject({ id: "r9", status: "answered" });
    expect(relay.calls.filter(isGet)).toHaveLength(0);
  });

  it("when the caller aborts while waiting, the request is cancelled on the relay and ask rejects with an AbortError", async () => {
    const controller = new AbortController();
    const asking = client({ maxWaitSeconds: 30 }).ask(confirm, { signal: controller.signal });
    const created = await relay.nextRequest();
    await until(() => relay.calls.some(isGet));
    controller.abort();
    await expect(asking).rejects.toMatchObject({ name: "AbortError" });
    expect(relay.callsTo("DELETE", `/v1/requests/${created.id}`)).toHaveLength(1);
    expect(relay.requests.get(created.id)!.status).toBe("cancelled");
  });

  it("when the caller aborts while the POST is still in flight, ask rejects at once and the request created afterwards is cancelled", async () => {
    let releasePost!: () => void;
    relay.fault = (call) => (isPost(call) ? new Promise<undefined>((resolve) => (releasePost = () => resolve(undefined))) : undefined);
    const controller = new AbortController();
    const asking = client().ask(confirm, { signal: controller.signal });
    await until(() => relay.calls.some(isPost));
    controller.abort();
    await expect(asking).rejects.toMatchObject({ name: "AbortError" });
    releasePost();
    await until(() => relay.calls.some((c) => c.method === "DELETE"));
    expect(relay.requests.get("r1")!.status).toBe("cancelled");
  });

  it("when the signal has already aborted, nothing is posted", async () => {
    await expect(client().ask(confirm, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: "AbortError" });
    expect(relay.calls).toHaveLength(0);
  });

  it("when the request expires, ask returns it with status expired", async () => {
    const asking = client().ask(confirm);
    const created = await relay.nextRequest();
    relay.end(created.id, { status: "expired" });
    await expect(asking).resolves.toMatchObject({ status: "expired" });
  });

  it("when a request is cancelled, DELETE is sent and the cancelled request comes back", async () => {
    const { id } = await client().request(confirm);
    await expect(client().cancel(id)).resolves.toMatchObject({ id, status: "cancelled" });
  });

  it("when cancelling a request that was already answered, the 409 comes back as relay_already_answered", async () => {
    const { id } = await client().request(confirm);
    relay.answer(id, { answers: { go: true } });
    await expect(client().cancel(id)).rejects.toMatchObject({ code: "relay_already_answered", status: 409 });
  });
});

describe("new RelayClient", () => {
  it("when the URL is not http(s) or the token is empty, it refuses to construct", () => {
    expect(() => new RelayClient({ url: "relay.example.com", token: TOKEN })).toThrow(/http/);
    expect(() => new RelayClient({ url: "http://relay", token: "" })).toThrow(/token/);
  });
});

describe("RelayClient.claudeCodeHook", () => {
  const input = { hook_event_name: "PreToolUse" as const, session_id: "s1", tool_name: "Bash", tool_input: { command: "ls" }, transcript_path: "/t.jsonl" };
  const allow = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } };

  it("when the relay answers, the hook input reached it unchanged with the hook's timeout and its hook JSON comes back", async () => {
    relay.hook = () => ({ status: 200, json: allow });
    await expect(client().claudeCodeHook(input, { timeoutSeconds: 120 })).resolves.toEqual(allow);
    const [call] = relay.callsTo("POST", "/v1/hooks/claude-code");
    expect(call!.query.get("timeout")).toBe("120");
    expect(call!.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect(JSON.parse(call!.text)).toEqual(input);
  });

  it("tells the relay it retries a 503 itself, so an instance shutting down refuses it rather than denying, and the retry gets the answer", async () => {
    const replies = [error(503, "relay_shutting_down", "shutting down"), { status: 200, json: allow }];
    relay.hook = () => replies.shift()!;
    await expect(client().claudeCodeHook(input, { timeoutSeconds: 60 })).resolves.toEqual(allow);
    const calls = relay.callsTo("POST", "/v1/hooks/claude-code");
    expect(calls.map((c) => c.headers["x-relay-retries-unavailable"])).toEqual(["1", "1"]);
  });

  it("reads a reply whose hook JSON follows the relay's keepalive spaces", async () => {
    relay.hook = () => ({ status: 200, text: `   \n ${JSON.stringify(allow)}` });
    await expect(client().claudeCodeHook(input, { timeoutSeconds: 60 })).resolves.toEqual(allow);
  });

  it("when the relay answers with a decision for another event, it is a bad reply, retried and then thrown", async () => {
    relay.hook = () => ({ status: 200, json: { hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow" } } } });
    const failure = await client({ retries: 1 })
      .claudeCodeHook(input, { timeoutSeconds: 60 })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ name: "RelayClientError", code: "relay_bad_reply" });
    expect(relay.callsTo("POST", "/v1/hooks/claude-code")).toHaveLength(2);
  });

  it("when the relay is restarting (503), it retries and returns the answer", async () => {
    const replies = [error(503, "relay_not_ready", "starting"), { status: 200, json: allow }];
    relay.hook = () => replies.shift()!;
    await expect(client().claudeCodeHook(input, { timeoutSeconds: 60 })).resolves.toEqual(allow);
  });

  it("gives up before the hook's own timeout instead of waiting out its retries", async () => {
    relay.hook = () => error(503, "relay_not_ready", "starting");
    const started = Date.now();
    const failure = await client({ retries: 50, initialRetryDelayMs: 1000, maxRetryDelayMs: 1000 })
      .claudeCodeHook(input, { timeoutSeconds: 3 })
      .catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: "relay_unreachable" });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("when the hook input is refused (400), it throws the relay's error without retrying", async () => {
    relay.hook = () => error(400, "relay_invalid_request", "Invalid request: tool_name: Required");
    await expect(client().claudeCodeHook(input, { timeoutSeconds: 60 })).rejects.toMatchObject({ code: "relay_invalid_request", status: 400 });
    expect(relay.calls).toHaveLength(1);
  });
});
