/**
 * The logger: one JSON object per line, entries below the level dropped,
 * Slack tokens redacted wherever they appear, errors without stack traces.
 */
import { describe, expect, it } from "vitest";
import { pino } from "pino";
import { createLogger, redact, STDOUT_CHUNK, type LogLevel } from "../../src/logger.js";

const AT = Date.UTC(2024, 0, 2, 3, 4, 5, 678);
const BOT = "xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp";
const USER = "xoxp-1234567890-0987654321-1234567890-abcdef";
const APP = "xapp-1-A0123456789-1234567890123-abcdef0123";

function capture(level?: LogLevel) {
  const lines: string[] = [];
  const logger = createLogger({ ...(level ? { level } : {}), write: (line) => lines.push(line), now: () => AT });
  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, entries };
}

describe("logger", () => {
  it("writes one JSON object per entry, with time, level, message and fields", () => {
    const { logger, lines } = capture();
    logger.info({ id: "req-1", kind: "permission", created: true }, "request created");
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain("\n");
    expect(JSON.parse(lines[0]!)).toEqual({
      time: "2024-01-02T03:04:05.678Z",
      level: "info",
      msg: "request created",
      id: "req-1",
      kind: "permission",
      created: true,
    });
  });

  it("keeps a multi-line message on one line", () => {
    const { logger, lines, entries } = capture();
    logger.warn("first\nsecond");
    expect(lines[0]).not.toContain("\n");
    expect(entries()[0]!.msg).toBe("first\nsecond");
  });

  it("logs info and above by default, dropping debug", () => {
    const { logger, entries } = capture();
    logger.debug("d");
    logger.info("i");
    logger.warn("w");
    logger.error("e");
    expect(entries().map((e) => [e.level, e.msg])).toEqual([
      ["info", "i"],
      ["warn", "w"],
      ["error", "e"],
    ]);
  });

  it.each<[LogLevel, string[]]>([
    ["debug", ["debug", "info", "warn", "error"]],
    ["info", ["info", "warn", "error"]],
    ["warn", ["warn", "error"]],
    ["error", ["error"]],
  ])("at level %s writes only %j", (level, written) => {
    const { logger, entries } = capture(level);
    logger.debug("x");
    logger.info("x");
    logger.warn("x");
    logger.error("x");
    expect(entries().map((e) => e.level)).toEqual(written);
  });

  it("redacts bot, user and app-level tokens in the message, in fields and nested deep", () => {
    const { logger, lines } = capture();
    logger.error(
      {
        headers: { authorization: `Bearer ${USER}` },
        attempts: [{ token: APP }],
        [`key-${BOT}`]: 1,
      },
      `auth failed for ${BOT}`,
    );
    const line = lines[0]!;
    for (const token of [BOT, USER, APP]) expect(line).not.toContain(token.slice(5));
    const entry = JSON.parse(line) as { msg: string; headers: { authorization: string }; attempts: Array<{ token: string }> };
    expect(entry.msg).toBe("auth failed for xoxb-[redacted]");
    expect(entry.headers.authorization).toBe("[redacted]");
    expect(entry.attempts[0]!.token).toBe("xapp-[redacted]");
    expect(line).toContain('"key-xoxb-[redacted]":1');
  });

  it("redacts a token inside an error's message", () => {
    const { logger, lines } = capture();
    logger.error({ error: new Error(`invalid_auth for ${BOT}`) }, "slack call failed");
    expect(lines[0]).not.toContain(BOT.slice(5));
    expect(lines[0]).toContain("xoxb-[redacted]");
  });

  it("leaves text that only looks like a token prefix alone", () => {
    expect(redact("the xoxb- prefix and xappy-go-lucky")).toBe("the xoxb- prefix and xappy-go-lucky");
    expect(redact(`two: ${BOT} ${APP}`)).toBe("two: xoxb-[redacted] xapp-[redacted]");
  });

  it("redacts the password of a redis:// or rediss:// URL, and password fields", () => {
    expect(redact("REDIS_URL=rediss://relay:s3cr3t-pw@cache:6380/2 and redis://:only-pw@10.0.0.5")).toBe(
      "REDIS_URL=rediss://relay:[redacted]@cache:6380/2 and redis://:[redacted]@10.0.0.5",
    );
    expect(redact("redis://cache.internal:6379/0")).toBe("redis://cache.internal:6379/0");
    const { logger, lines } = capture();
    logger.info({ redis: { host: "cache", password: "s3cr3t-pw", sentinelPassword: "s3nt-pw" }, password: "top-pw" }, "store target");
    expect(lines[0]).not.toMatch(/s3cr3t-pw|s3nt-pw|top-pw/);
  });

  it("censors the fields REDACTED_PATHS names, at the top, one level down and in headers, and leaves the caller's objects as they were", () => {
    const { logger, entries } = capture();
    const fields = {
      token: "t-top",
      botToken: "t-bot",
      signingSecret: "t-signing",
      call: { token: "t-one", authorization: "Basic t-auth", kept: "visible", headers: { authorization: "Bearer t-hdr", accept: "json" } },
      req: { headers: { cookie: "t-cookie", authorization: "Bearer t-req" } },
      tokenName: "my-agent",
      absent: { token: undefined },
    };
    const before = JSON.stringify(fields);
    logger.info(fields, "call made");
    expect(entries()[0]).toMatchObject({
      token: "[redacted]",
      botToken: "[redacted]",
      signingSecret: "[redacted]",
      call: { token: "[redacted]", authorization: "[redacted]", kept: "visible", headers: { authorization: "[redacted]", accept: "json" } },
      req: { headers: { cookie: "[redacted]", authorization: "[redacted]" } },
      tokenName: "my-agent",
    });
    expect(entries()[0]!.absent).toEqual({});
    expect(JSON.stringify(fields)).toBe(before);
  });

  it("scrubs Slack tokens from a child logger's bindings too (the relay's one child binds requestId, method and path)", () => {
    const { logger, lines } = capture();
    logger.child({ requestId: "r-1", method: "GET", path: `/v1/requests/${BOT}` }).info("request finished");
    expect(lines[0]).not.toContain(BOT.slice(5));
    expect(lines[0]).toContain("/v1/requests/xoxb-[redacted]");
  });

  it("logs a refused Redis sign-in without the password ioredis attaches to the error (the HELLO it sent)", () => {
    const { logger, lines, entries } = capture();
    const error = Object.assign(new Error("WRONGPASS invalid username-password pair or user is disabled."), {
      name: "ReplyError",
      command: { name: "hello", args: [3, "AUTH", "relay", "s3cr3t-pw"] },
    });
    logger.warn({ connection: "commands", error }, "redis connection lost");
    expect(lines[0]).not.toContain("s3cr3t-pw");
    expect(entries()[0]!.error).toEqual({ name: "ReplyError", message: error.message });
  });

  it("serialises errors as name, message and code, without the stack", () => {
    const { logger, lines, entries } = capture();
    const error = Object.assign(new TypeError("socket hang up"), { code: "ECONNRESET" });
    logger.error({ error, nested: { cause: new RangeError("too far") } }, "post failed");
    expect(lines[0]).not.toContain("at ");
    expect(lines[0]).not.toContain("stack");
    expect(entries()[0]).toMatchObject({
      error: { name: "TypeError", message: "socket hang up", code: "ECONNRESET" },
      nested: { cause: { name: "RangeError", message: "too far" } },
    });
    expect(entries()[0]!.nested).toEqual({ cause: { name: "RangeError", message: "too far" } });
  });

  it("stamps each entry with the injected clock", () => {
    let t = AT;
    const lines: string[] = [];
    const logger = createLogger({ write: (line) => lines.push(line), now: () => t });
    logger.info("a");
    t += 1500;
    logger.info("b");
    expect(lines.map((l) => (JSON.parse(l) as { time: string }).time)).toEqual(["2024-01-02T03:04:05.678Z", "2024-01-02T03:04:07.178Z"]);
  });

  it("a field named time, level or msg cannot overwrite the entry's own", () => {
    const { logger, entries } = capture();
    logger.error({ level: "debug", msg: "all good", time: "yesterday", disk: "/var" }, "disk full");
    expect(entries()[0]).toEqual({ time: "2024-01-02T03:04:05.678Z", level: "error", msg: "disk full", disk: "/var" });
  });

  it("never throws on fields JSON cannot hold, and still logs the message", () => {
    const { logger, entries } = capture();
    const cyclic: Record<string, unknown> = { name: "loop" };
    cyclic.self = cyclic;
    expect(() => logger.error({ error: cyclic }, "background task failed")).not.toThrow();
    expect(() => logger.warn({ n: 10n }, "big number")).not.toThrow();
    expect(entries()).toMatchObject([
      { time: "2024-01-02T03:04:05.678Z", level: "error", msg: "background task failed", error: { name: "loop", self: "[Circular]" } },
      { time: "2024-01-02T03:04:05.678Z", level: "warn", msg: "big number", n: 10 },
    ]);
  });

  it("redacts a token in the message even when the fields cannot be serialised", () => {
    const { logger, lines } = capture();
    logger.error({ n: 1n }, `failed with ${BOT}`);
    expect(lines[0]).toContain("xoxb-[redacted]");
    expect(lines[0]).not.toContain(BOT.slice(5));
  });

  it("queues stdout lines behind a write in flight in chunks of about a kilobyte, not sonic-boom's 16 KB", () => {
    // The pending chunk is measured (so flattened, copied) on every line queued behind it: a small chunk keeps that copy small.
    const stream = (createLogger() as unknown as Record<symbol, { maxWrite?: number }>)[pino.symbols.streamSym]!;
    expect(STDOUT_CHUNK).toBeLessThanOrEqual(1024);
    expect(stream.maxWrite).toBe(STDOUT_CHUNK);
  });
});
