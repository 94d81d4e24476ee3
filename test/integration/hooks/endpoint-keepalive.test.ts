/**
 * Held Claude Code hook calls behind a proxy that cuts idle connections (as
 * load balancers do after 60 s): the relay starts the 200 once the first
 * keepalive is due and writes a space every interval until the hook JSON, so
 * the proxy never sees the connection idle. Real HTTP through a real TCP
 * proxy (test/helpers/idle-proxy.ts), with the interval and the proxy's idle
 * timeout scaled down to fractions of a second. The real Claude Code reading
 * such a reply: claude-code-keepalive.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { DISCONNECT_REASON } from "../../../src/requests/hooks/calls.js";
import { startIdleProxy, type IdleProxy } from "../../helpers/idle-proxy.js";
import { startApiRelay, TOKENS, type ApiRelay } from "../../helpers/api-relay.js";
import { hookFixture } from "../../fixtures/claude-code.js";

import { ALICE } from "../../fixtures/people.js";
import { sleep, until } from "../../helpers/until.js";
const allow = { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } };

let relay: ApiRelay | undefined;
let proxy: IdleProxy | undefined;
afterEach(async () => {
  await proxy?.close();
  await relay?.close();
  proxy = relay = undefined;
});

async function setup(keepaliveMs: number, proxyIdleMs?: number) {
  relay = await startApiRelay({ http: { hookKeepaliveMs: keepaliveMs } });
  if (proxyIdleMs !== undefined) proxy = await startIdleProxy(relay.url, proxyIdleMs);
  return { relay, base: proxy?.url ?? relay.url };
}

function hookCall(base: string, init: { signal?: AbortSignal; body?: unknown; query?: string } = {}) {
  return fetch(`${base}/v1/hooks/claude-code${init.query ?? "?timeout=60"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKENS[0]!.token}`, "content-type": "application/json" },
    body: JSON.stringify(init.body ?? hookFixture("pre-tool-use")),
    ...(init.signal ? { signal: init.signal } : {}),
  });
}

async function held(relay: ApiRelay, count: number) {
  await until(
    () => relay.service.waiting === count,
    3000,
    () => `${count} held calls (have ${relay.service.waiting})`,
  );
}

describe("a held Claude Code hook call behind a proxy that cuts connections idle for 1.5 s", () => {
  it("with a keepalive every 250 ms, outlasts the proxy's idle timeout and gets the person's answer after the spaces", { timeout: 15_000 }, async () => {
    const { relay, base } = await setup(250, 1500);
    const call = hookCall(base);
    await held(relay, 1);
    await sleep(3500);
    const id = relay.stored[0]!.id;
    expect((await relay.service.answer(id, { reply: "y" }, ALICE)).outcome).toBe("applied");

    const response = await call;
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(text).toMatch(/^ {5,}\{/);
    expect(JSON.parse(text)).toEqual(allow);
    expect(proxy!.cuts).toBe(0);
  });

  it(
    "with a keepalive slower than the proxy's idle timeout, is cut by the proxy and its request cancelled as the caller left",
    { timeout: 15_000 },
    async () => {
      const { relay, base } = await setup(5000, 1500);
      const call = hookCall(base).then((r) => r.text());
      await held(relay, 1);

      await expect(call).rejects.toThrow();
      expect(proxy!.cuts).toBe(1);
      await held(relay, 0);
      expect(await relay.service.get(relay.stored[0]!.id)).toMatchObject({ status: "cancelled", error: DISCONNECT_REASON });
    },
  );
});

describe("the keepalive of a held hook call", () => {
  it("is not started for a call answered before the first keepalive is due: a plain reply with Content-Length", async () => {
    const { relay, base } = await setup(2000);
    const call = hookCall(base);
    await held(relay, 1);
    await relay.service.answer(relay.stored[0]!.id, { reply: "y" }, ALICE);

    const response = await call;
    expect(response.headers.get("content-length")).toEqual(expect.any(String));
    expect(await response.text()).toBe(JSON.stringify(allow));
  });

  it("leaves a bad hook input its 400, whatever the keepalive", async () => {
    const { relay, base } = await setup(1);
    const response = await hookCall(base, { body: { ...hookFixture("pre-tool-use"), tool_name: "" } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("relay_invalid_request");
    expect(relay.stored).toEqual([]);
  });

  it("still lets a caller that leaves mid-keepalive cancel the request, and stops writing to it", { timeout: 10_000 }, async () => {
    const { relay, base } = await setup(100);
    const leave = new AbortController();
    const response = await hookCall(base, { signal: leave.signal });
    expect(response.status).toBe(200);
    await sleep(400);
    leave.abort();

    await held(relay, 0);
    expect(await relay.service.get(relay.stored[0]!.id)).toMatchObject({ status: "cancelled", cancelledBy: "claude-code", error: DISCONNECT_REASON });
    await sleep(300);
    expect(relay.logs.filter((line) => /"level":"(error|fatal)"/.test(line))).toEqual([]);
  });

  it("keeps retried calls for the same tool call joined on one request while both are kept alive", { timeout: 10_000 }, async () => {
    const { relay, base } = await setup(100);
    const first = hookCall(base);
    await held(relay, 1);
    const second = hookCall(base);
    await held(relay, 2);
    await sleep(300);
    await relay.service.idle();
    expect(relay.messenger.posts).toHaveLength(1);
    await relay.service.answer(relay.stored[0]!.id, { reply: "y" }, ALICE);

    for (const call of [first, second]) expect(JSON.parse(await (await call).text())).toEqual(allow);
  });
});
