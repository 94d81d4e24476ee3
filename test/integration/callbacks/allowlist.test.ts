/**
 * RELAY_CALLBACK_HOSTS through the HTTP API: when set, a callbackUrl naming
 * another host is refused with a 400 on `callbackUrl` and creates nothing;
 * when unset, any http(s) host is accepted.
 */
import { afterEach, describe, expect, it } from "vitest";
import { bodies, startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";

let relay: ApiRelay | undefined;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
});

async function create(callbackHosts: readonly string[] | undefined, callbackUrl: string) {
  relay = await startApiRelay(callbackHosts ? { callbackHosts } : {});
  const response = await relay.call("/v1/requests", { json: bodies.stepGate({ callbackUrl }) });
  await relay.service.idle();
  return { response, relay };
}

describe("callback host allowlist", () => {
  it("a callbackUrl on a listed host is accepted and kept with the request", async () => {
    const { response, relay } = await create(["hooks.example.com", "ci.example.net"], "https://Hooks.Example.com/relay?run=42");
    expect(response.status).toBe(201);
    expect(relay.stored).toHaveLength(1);
    expect(relay.stored[0]!.body.callbackUrl).toBe("https://Hooks.Example.com/relay?run=42");
  });

  it.each(["https://evil.example.org/relay", "https://evil.hooks.example.com/relay", "https://hooks.example.com.evil.io/relay"])(
    "a callbackUrl on another host (%s) gets a 400 on callbackUrl and creates nothing",
    async (callbackUrl) => {
      const { response, relay } = await create(["hooks.example.com"], callbackUrl);
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe("relay_invalid_request");
      expect(response.body.error.details).toStrictEqual([{ path: "callbackUrl", message: expect.stringContaining(new URL(callbackUrl).hostname) }]);
      expect(relay.stored).toStrictEqual([]);
      expect(relay.messenger.posts).toStrictEqual([]);
    },
  );

  it("a refused callbackUrl does not take its idempotency key", async () => {
    relay = await startApiRelay({ callbackHosts: ["hooks.example.com"] });
    const key = { "idempotency-key": "deploy-8" };
    const refused = await relay.call("/v1/requests", { json: bodies.stepGate({ callbackUrl: "https://evil.example.org/relay" }), headers: key });
    const allowed = await relay.call("/v1/requests", { json: bodies.stepGate({ callbackUrl: "https://hooks.example.com/relay" }), headers: key });
    expect([refused.status, allowed.status]).toStrictEqual([400, 201]);
    expect(relay.stored).toHaveLength(1);
  });

  it("with no allowlist, a callbackUrl on any http(s) host is accepted", async () => {
    const { response, relay } = await create(undefined, "http://anything.example.org:8080/hook");
    expect(response.status).toBe(201);
    expect(relay.stored).toHaveLength(1);
  });
});
