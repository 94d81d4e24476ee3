import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { bodies, startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay();
});
afterEach(async () => {
  await relay.close();
});

/** mulberry32: a small seeded generator, so a failure can be replayed from its seed. */
function generator(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

type Random = ReturnType<typeof generator>;

const awkwardStrings = ["", " ", "permission", "__proto__", "constructor", "<!channel>", "\u0000", "\ud800", "💥".repeat(50), "x".repeat(5000)];
const awkwardNumbers = [0, -1, 1.5, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 60];

function randomValue(r: Random, depth = 0): unknown {
  switch (r.int(depth > 3 ? 4 : 6)) {
    case 0:
      return r.pick(awkwardStrings);
    case 1:
      return r.pick(awkwardNumbers);
    case 2:
      return r.pick([true, false, null]);
    case 3:
      return r.next().toString(36).slice(2);
    case 4:
      return Array.from({ length: r.int(6) }, () => randomValue(r, depth + 1));
    default: {
      const value: Record<string, unknown> = {};
      for (let i = r.int(6); i > 0; i -= 1) value[r.pick([...awkwardStrings, "kind", "questions", "input", "toolName", "options"])] = randomValue(r, depth + 1);
      return value;
    }
  }
}

const validBodies = [bodies.bashPermission(), bodies.stepGate(), bodies.askUserQuestion(), bodies.interactive()];

/** A valid body with one field replaced by a random value, removed, or a random field added. */
function mutated(r: Random): unknown {
  const body: Record<string, unknown> = structuredClone(r.pick(validBodies));
  const keys = Object.keys(body);
  const target = r.pick(keys);
  switch (r.int(3)) {
    case 0:
      body[target] = randomValue(r);
      break;
    case 1:
      delete body[target];
      break;
    default:
      body[r.pick(awkwardStrings) || "extra"] = randomValue(r);
  }
  return body;
}

function randomBody(r: Random): string | Uint8Array {
  switch (r.int(4)) {
    case 0:
      return JSON.stringify(randomValue(r)) ?? "";
    case 1: {
      const text = JSON.stringify(r.pick(validBodies));
      return text.slice(0, r.int(text.length));
    }
    case 2:
      return Uint8Array.from({ length: r.int(2000) }, () => r.int(256));
    default:
      return JSON.stringify(mutated(r));
  }
}

describe("malformed bodies", () => {
  const seed = Date.now() % 1_000_000;

  it(`200 random malformed bodies never get a 5xx, create only what is valid, and the relay stays up (seed ${seed})`, async () => {
    const r = generator(seed);
    const statuses: number[] = [];
    const created = new Set<string>();
    for (let batch = 0; batch < 20; batch += 1) {
      const sent = Array.from({ length: 10 }, () => randomBody(r));
      const responses = await Promise.all(sent.map((body) => relay.call("/v1/requests", { body })));
      for (const response of responses) if (response.status === 201) created.add(response.body.id);
      responses.forEach((response, i) => {
        const shown = typeof sent[i] === "string" ? (sent[i] as string).slice(0, 300) : `${(sent[i] as Uint8Array).length} random bytes`;
        // 200: a valid body asking what a pending request of the same agent session asks joins it (src/requests/idempotency.ts askKey).
        expect([200, 201, 400], `${response.status} for ${shown}`).toContain(response.status);
        if (response.status === 400) expect(response.body.error.code).toMatch(/^relay_invalid_(json|request)$/);
        if (response.status === 200) expect(created, `the request ${shown} joined`).toContain(response.body.id);
        statuses.push(response.status);
      });
    }
    expect(statuses).toHaveLength(200);
    expect(statuses.filter((s) => s === 400).length).toBeGreaterThan(150);
    await relay.service.idle();
    // Every valid body reaches the store: a new request (201) or one that joined a pending one (200).
    expect(relay.stored).toHaveLength(statuses.filter((s) => s !== 400).length);
    expect(created.size).toBe(statuses.filter((s) => s === 201).length);
    expect(relay.logs.filter((line) => line.includes('"level":"error"'))).toEqual([]);
    expect((await relay.call("/healthz")).status).toBe(200);
  });

  it("random bytes with random content types and query strings never get a 5xx", async () => {
    const r = generator(seed + 1);
    for (let i = 0; i < 50; i += 1) {
      const type = r.pick(["application/json", "text/plain", "application/json; charset=latin1", "", "application/vnd.api+json"]);
      const query = r.pick(["", "?wait=0", "?wait=", "?wait=1e3", "?wait=0.01&wait=0.02", "?%zz", "?wait=%00"]);
      const response = await relay.call(`/v1/requests${query}`, { body: JSON.stringify(randomValue(r)) ?? "", headers: { "content-type": type } });
      expect(response.status, `${type} ${query}`).toBeLessThan(500);
    }
    expect((await relay.call("/healthz")).status).toBe(200);
  });
});
