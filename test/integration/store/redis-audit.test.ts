/**
 * The Redis Stream audit log against the shared audit log contract on a real
 * Redis server and on a real Redis Cluster (where a script whose keys sit on
 * two slots fails with CROSSSLOT), plus what only Redis has: the stream's layout, entries that
 * do not parse, connection ownership, and a Redis that refuses or never
 * answers (StoreUnavailableError within the bound).
 */
import { createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { Redis } from "ioredis";
import { beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../../src/logger.js";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { connectRedisAuditLog, createRedisAuditLog } from "../../../src/store/redis-audit.js";
import { entry, runAuditLogContract } from "../../helpers/audit-contract.js";
import { freePort } from "../../helpers/ports.js";
import { REDIS_TEST_URL, useTestRedis } from "../../helpers/redis.js";
import { useTestCluster } from "../../helpers/store-backends.js";

const testRedis = useTestRedis();
const newPrefix = testRedis.prefix;

const testCluster = useTestCluster();

runAuditLogContract("redis", async (options) => createRedisAuditLog({ redis: testRedis.redis(), prefix: newPrefix(), ...options }));
runAuditLogContract("redis cluster", async (options) => createRedisAuditLog({ redis: testCluster.redis(), prefix: testCluster.prefix(), ...options }));

describe("redis audit log specifics", () => {
  let redis: Redis;
  beforeAll(() => {
    redis = testRedis.redis();
  });

  it("keeps each event as one stream entry under <prefix>:audit: its JSON, without the id, in the field `event`", async () => {
    const prefix = newPrefix();
    const log = createRedisAuditLog({ redis, prefix, maxEvents: 100 });
    await log.append(entry({ type: "posted" }));
    const entries = await redis.xrange(`${prefix}:audit`, "-", "+");
    expect(entries).toHaveLength(1);
    const [id, fields] = entries[0]!;
    expect(fields).toHaveLength(2);
    expect(fields[0]).toBe("event");
    expect(JSON.parse(fields[1]!)).toStrictEqual(entry({ type: "posted" }));
    expect((await log.read({ limit: 1 }))[0]!.id).toBe(id);
  });

  it("holds the stream at exactly maxEvents entries of no decision, keeping the oldest, and counts the rest in <prefix>:audit:{<prefix>:audit}:drops", async () => {
    const prefix = newPrefix();
    const log = createRedisAuditLog({ redis, prefix, maxEvents: 150 });
    for (let i = 0; i < 400; i += 1) await log.append(entry({ requestId: `req-${i}` }));
    expect(await redis.xlen(`${prefix}:audit`)).toBe(150);
    expect((await log.read({ limit: 1 }))[0]!.requestId).toBe("req-0");
    expect(await redis.hget(`${prefix}:audit:{${prefix}:audit}:drops`, "events")).toBe("250");
  });

  it("keeps what each token holds of its share in a list of its events' times (the ms of their ids), expiring with the retention", async () => {
    const prefix = newPrefix();
    const log = createRedisAuditLog({ redis, prefix, maxEvents: 100, tokenShare: 10, retentionMs: 60_000 });
    await log.append(entry({ type: "created" }));
    await log.append(entry({ type: "answered" }));
    const shareKey = `${prefix}:audit:{${prefix}:audit}:share:ci-bot`;
    const [created] = await log.read({ limit: 1 });
    expect(await redis.lrange(shareKey, 0, -1)).toStrictEqual([created!.id.split("-")[0]]);
    expect(await redis.pttl(shareKey)).toBeGreaterThan(50_000);
  });

  it("counts the drops an earlier relay recorded in <prefix>:audit:drops as the cap's", async () => {
    const prefix = newPrefix();
    await redis.hset(`${prefix}:audit:drops`, { events: 7, firstAt: 1_000, lastAt: 2_000 });
    const log = createRedisAuditLog({ redis, prefix, maxEvents: 1 });
    await log.append(entry({ type: "created" }));
    await log.append(entry({ type: "posted" }));
    const drops = await log.drops();
    expect(drops).toMatchObject({ events: 8, firstAt: 1_000, causes: [{ reason: "cap", events: 8, firstAt: 1_000 }] });
    expect(drops!.lastAt).toBeGreaterThan(2_000);
  });

  it("leaves out an entry that does not parse as an event, logs it, and reads on past it", async () => {
    const prefix = newPrefix();
    const lines: string[] = [];
    const log = createRedisAuditLog({ redis, prefix, maxEvents: 100, logger: createLogger({ write: (line) => lines.push(line) }) });
    await log.append(entry({ type: "created" }));
    const key = `${prefix}:audit`;
    const bad = [
      await redis.xadd(key, "*", "event", "{not json"),
      await redis.xadd(key, "*", "event", JSON.stringify(entry({ type: "written_by_a_newer_relay" as "created" }))),
      await redis.xadd(key, "*", "other", "x"),
      await redis.xadd(key, "*", "event", "[1, 2]"),
    ];
    await log.append(entry({ type: "answered" }));
    expect((await log.read({ limit: 2 })).map((e) => e.type)).toStrictEqual(["created", "answered"]);
    expect((await log.read({ limit: 10, requestId: "req-1" })).map((e) => e.type)).toStrictEqual(["created", "answered"]);
    const warned = lines.map((line) => JSON.parse(line) as { level: string; id: string; msg: string }).filter((l) => l.level === "warn");
    expect(warned.map((l) => l.id)).toStrictEqual(expect.arrayContaining(bad));
    expect(warned[0]!.msg).toMatch(/does not parse/);
  });

  it("close() leaves the caller's connection open; a log connected from a URL quits its own", async () => {
    const log = createRedisAuditLog({ redis, prefix: newPrefix(), maxEvents: 10 });
    await log.close();
    expect(await redis.ping()).toBe("PONG");

    const own = connectRedisAuditLog(REDIS_TEST_URL, { prefix: newPrefix(), maxEvents: 10 });
    await own.append(entry());
    expect(await own.read({ limit: 10 })).toHaveLength(1);
    await own.close();
    await expect(own.read({ limit: 10 })).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("refuses an ioredis keyPrefix and a cap that is not a positive integer", () => {
    const prefixed = new Redis(REDIS_TEST_URL, { keyPrefix: "x:", lazyConnect: true });
    expect(() => createRedisAuditLog({ redis: prefixed, maxEvents: 10 })).toThrow(/keyPrefix/);
    expect(() => createRedisAuditLog({ redis, maxEvents: 0 })).toThrow(/maxEvents/);
    expect(() => createRedisAuditLog({ redis, maxEvents: 10, prefix: "{x}" })).toThrow(/prefix/);
    prefixed.disconnect();
  });
});

describe("redis audit log outages", () => {
  const BOUND_MS = 300;
  /** Room for a loaded machine above the bound. */
  const SLACK_MS = 700;

  async function expectUnavailable(task: () => Promise<unknown>): Promise<void> {
    const started = Date.now();
    await expect(task()).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(Date.now() - started).toBeLessThan(BOUND_MS + SLACK_MS);
  }

  it("a Redis that refuses connections: append and read throw StoreUnavailableError within the bound", async () => {
    const port = await freePort();
    const log = connectRedisAuditLog(`redis://127.0.0.1:${port}`, { maxEvents: 10, timeoutMs: BOUND_MS });
    await expectUnavailable(() => log.append(entry()));
    await expectUnavailable(() => log.read({ limit: 10 }));
    await log.close();
  });

  it("a Redis that accepts the connection and never answers: StoreUnavailableError within the bound", async () => {
    const silent = await silentServer();
    const log = connectRedisAuditLog(`redis://127.0.0.1:${silent.port}`, { maxEvents: 10, timeoutMs: BOUND_MS });
    await expectUnavailable(() => log.append(entry()));
    await expectUnavailable(() => log.read({ limit: 10, requestId: "req-1" }));
    await log.close();
    await silent.close();
  });
});

/** A TCP server that takes connections and never writes a byte. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
