import { connect } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DISCARD_BOUNDS } from "../../../src/http/transport.js";
import { bodies, startApiRelay, type CallInit, type ApiRelay } from "../../helpers/api-relay.js";

let relay: ApiRelay;
beforeEach(async () => {
  relay = await startApiRelay();
});
afterEach(async () => {
  await relay.close();
});

interface Expected {
  status: number;
  code: string;
  /** The `details[].path` values of a 400, in order. */
  paths?: string[];
}

/** Sends a request that must be refused, checks the refusal, and that nothing was created or posted. */
async function refused(path: string, init: CallInit, expected: Expected) {
  const response = await relay.call(path, init);
  expect(response.status).toBe(expected.status);
  expect(response.body.error.code).toBe(expected.code);
  expect(typeof response.body.error.message).toBe("string");
  if (expected.paths) expect(response.body.error.details.map((d: { path: string }) => d.path)).toEqual(expected.paths);
  await nothingChanged();
  return response;
}

async function nothingChanged() {
  await relay.service.idle();
  expect(relay.stored).toEqual([]);
  expect(relay.messenger.posts).toEqual([]);
}

async function invalid(json: unknown, paths: string[]) {
  await refused("/v1/requests", { json }, { status: 400, code: "relay_invalid_request", paths });
}
const question = (options: number) => ({
  question: `Pick one of ${options}?`,
  header: "Pick",
  options: Array.from({ length: options }, (_, i) => ({ label: `option ${i}`, description: "" })),
  multiSelect: false,
});

/** Writes raw bytes to the relay and returns everything it sends back before closing (or 2 s). */
function raw(text: string, { end = false } = {}): Promise<string> {
  const { port } = new URL(relay.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
    socket.setTimeout(2000, () => socket.destroy());
    socket.write(text, () => {
      if (end) socket.end();
    });
  });
}

const auth = () => `Authorization: Bearer ${relay.tokens[0]!.token}\r\n`;

describe("bad bodies get 400 and create nothing", () => {
  it("invalid JSON → relay_invalid_json", async () => {
    await refused("/v1/requests", { body: '{"kind": "permission", ' }, { status: 400, code: "relay_invalid_json" });
  });

  it.each([
    ["an array", "[]"],
    ["a string", '"approve me"'],
    ["null", "null"],
    ["a number", "42"],
  ])("a body that is %s → 400 naming the body", async (_name, body) => {
    await refused("/v1/requests", { body }, { status: 400, code: "relay_invalid_request", paths: ["(body)"] });
  });

  it("an unknown kind → kind", () => invalid({ kind: "deploy", toolName: "Bash", input: {} }, ["kind"]));
  it("a missing toolName → toolName", () => invalid({ kind: "permission", input: { command: "ls" } }, ["toolName"]));
  it("an input that is not an object → input", async () => {
    await invalid({ ...bodies.bashPermission(), input: ["ls"] }, ["input"]);
    await invalid({ ...bodies.stepGate(), input: "rm -rf /" }, ["input"]);
  });
  it("0 questions → questions", () => invalid(bodies.askUserQuestion({ questions: [] }), ["questions"]));
  it("5 questions → questions", () => invalid(bodies.askUserQuestion({ questions: [1, 2, 3, 4, 5].map(() => question(2)) }), ["questions"]));
  it("1 option → questions.0.options", () => invalid(bodies.askUserQuestion({ questions: [question(1)] }), ["questions.0.options"]));
  it("5 options → questions.1.options", () => invalid(bodies.askUserQuestion({ questions: [question(2), question(5)] }), ["questions.1.options"]));
  it("an unknown question type → questions.0.type", () =>
    invalid(bodies.interactive({ questions: [{ id: "when", question: "When?", type: "date" }] }), ["questions.0.type"]));
  it.each([
    ["a backreference", "([A-Z])\\1-[0-9]+", /^pattern uses a backreference/],
    ["a lookahead", "(?=OPS)[A-Z]+-[0-9]+", /^pattern uses lookaround/],
    ["a lookbehind", "[A-Z]+-(?<!-0)[0-9]+", /^pattern uses lookaround/],
    ["a syntax error", "([A-Z]+-[0-9]+", /^pattern is not a valid RE2 regular expression: missing closing \)/],
    ["a program too large to check quickly", "[A-Z]{1,999}", /^pattern is too large to check quickly/],
  ])("a pattern with %s → questions.0.pattern, with the reason", async (_name, pattern, reason) => {
    const response = await refused(
      "/v1/requests",
      { json: bodies.interactive({ questions: [{ id: "ticket", question: "Ticket?", type: "text", pattern }] }) },
      { status: 400, code: "relay_invalid_request", paths: ["questions.0.pattern"] },
    );
    expect(response.body.error.details[0].message).toMatch(reason);
  });
  it.each([-5, 0, 10 ** 9, 1.5, "60"])("timeoutSeconds %s → timeoutSeconds", (timeoutSeconds) =>
    invalid(bodies.stepGate({ timeoutSeconds }), ["timeoutSeconds"]),
  );
  it("unknown top-level fields → each by name", () => invalid(bodies.bashPermission({ priority: "high", urgent: true }), ["priority", "urgent"]));
  it.each(["#general", "general", "c0123456789", "C01"])("channel %s → channel", (channel) => invalid(bodies.stepGate({ channel }), ["channel"]));
  it.each(["ftp://example.com/hook", "javascript:alert(1)", "not a url", "file:///etc/passwd"])("callbackUrl %s → callbackUrl", (callbackUrl) =>
    invalid(bodies.stepGate({ callbackUrl }), ["callbackUrl"]),
  );

  it("an input nested absurdly deep → input, not a 500", async () => {
    const depth = 50_000;
    const body = `{"kind":"step_gate","toolName":"Bash","input":{"a":${"[".repeat(depth)}${"]".repeat(depth)}}}`;
    await refused("/v1/requests", { body }, { status: 400, code: "relay_invalid_request", paths: ["input"] });
  });

  it("an Idempotency-Key header that differs from the body's key → idempotencyKey", async () => {
    await refused(
      "/v1/requests",
      { json: bodies.stepGate({ idempotencyKey: "a" }), headers: { "Idempotency-Key": "b" } },
      { status: 400, code: "relay_invalid_request", paths: ["idempotencyKey"] },
    );
  });

  it.each(["text/plain", "application/x-www-form-urlencoded"])("Content-Type %s → 415", async (type) => {
    await refused("/v1/requests", { json: bodies.stepGate(), headers: { "content-type": type } }, { status: 415, code: "relay_unsupported_media_type" });
  });
});

describe("bad tokens get 401 and create nothing", () => {
  it.each([
    ["no Authorization header", {}],
    ["an unknown token", { authorization: "Bearer tok_not_configured_0000000" }],
    ["the Basic scheme with a valid token", { authorization: `Basic ${Buffer.from("ci-bot:tok_ci_0123456789abcdef0123").toString("base64")}` }],
    ["a valid token under the Basic scheme name", { authorization: "Basic tok_ci_0123456789abcdef0123" }],
  ])("%s → 401 with a Bearer challenge", async (_name, headers) => {
    const response = await refused("/v1/requests", { json: bodies.stepGate(), as: null, headers }, { status: 401, code: "relay_unauthorized" });
    expect(response.headers.get("www-authenticate")).toBe("Bearer");
  });

  it("a bad token is refused before the body is looked at", async () => {
    await refused("/v1/requests", { body: "not json", as: null }, { status: 401, code: "relay_unauthorized" });
  });

  it("reading and cancelling need a token too", async () => {
    const { body: created } = await relay.call("/v1/requests", { json: bodies.stepGate() });
    for (const method of ["GET", "DELETE"]) {
      const response = await relay.call(`/v1/requests/${created.id}`, { method, as: null });
      expect(response.status).toBe(401);
    }
    expect((await relay.service.get(created.id))?.status).toBe("pending");
  });
});

describe("ids that are not yours are not found", () => {
  it.each(["GET", "DELETE"])("%s of an unknown id → 404 relay_not_found", async (method) => {
    await refused("/v1/requests/7d4f0c1e-0000-4000-8000-000000000000", { method }, { status: 404, code: "relay_not_found" });
  });

  it("GET, GET ?wait and DELETE of another token's request → 404, and the request stays pending", async () => {
    const { body: created } = await relay.call("/v1/requests", { json: bodies.stepGate(), as: "laptop" });
    for (const [method, query] of [
      ["GET", ""],
      ["GET", "?wait=5"],
      ["DELETE", ""],
    ] as const) {
      const started = Date.now();
      const response = await relay.call(`/v1/requests/${created.id}${query}`, { method, as: "ci-bot" });
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe("relay_not_found");
      expect(Date.now() - started).toBeLessThan(1000);
    }
    expect((await relay.service.get(created.id))?.status).toBe("pending");
  });

  it("an overlong id → 404", async () => {
    await refused(`/v1/requests/${"x".repeat(500)}`, {}, { status: 404, code: "relay_not_found" });
  });
});

describe("bad ?wait values get 400 on the wait field", () => {
  it.each(["-1", "61", "abc"])("POST ?wait=%s creates nothing", async (wait) => {
    await refused(`/v1/requests?wait=${wait}`, { json: bodies.stepGate() }, { status: 400, code: "relay_invalid_request", paths: ["wait"] });
  });

  it.each(["-1", "61", "abc"])("GET ?wait=%s", async (wait) => {
    const { body: created } = await relay.call("/v1/requests", { json: bodies.stepGate() });
    const response = await relay.call(`/v1/requests/${created.id}?wait=${wait}`);
    expect(response.status).toBe(400);
    expect(response.body.error.details).toEqual([{ path: "wait", message: expect.any(String) }]);
    expect(relay.service.waiting).toBe(0);
  });
});

describe("wrong paths and methods", () => {
  it("an unknown path → 404 relay_not_found", async () => {
    await refused("/v2/requests", { json: bodies.stepGate() }, { status: 404, code: "relay_not_found" });
    await refused("/", {}, { status: 404, code: "relay_not_found" });
  });

  it.each([
    ["PUT", "/v1/requests", "POST, GET, HEAD"],
    ["POST", "/v1/requests/abc", "GET, DELETE, HEAD"],
    ["PATCH", "/v1/requests/abc", "GET, DELETE, HEAD"],
    ["DELETE", "/healthz", "GET, HEAD"],
  ])("%s %s → 405 with Allow: %s", async (method, path, allow) => {
    const response = await refused(path, { method, json: bodies.stepGate() }, { status: 405, code: "relay_method_not_allowed" });
    expect(response.headers.get("allow")).toBe(allow);
  });
});

describe("oversized bodies", () => {
  const huge = () => JSON.stringify(bodies.bashPermission({ input: { command: "x".repeat(1_100_000) } }));

  it("a body over 1 MB → 413 relay_body_too_large, the connection closes, and the next request is served", async () => {
    const response = await refused("/v1/requests", { body: huge() }, { status: 413, code: "relay_body_too_large" });
    expect(response.headers.get("connection")).toBe("close");
    const next = await relay.call("/v1/requests", { json: bodies.stepGate() });
    expect(next.status).toBe(201);
  });

  it("a client that never stops sending gets the 413 and its connection closed within the discard bounds (Node's fetch: test/integration/cli/serve.test.ts)", async () => {
    const { port } = new URL(relay.url);
    const socket = connect(Number(port), "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => (received += chunk));
    socket.on("error", () => undefined);
    const closed = new Promise<number>((resolve) => socket.on("close", () => resolve(Date.now())));
    const started = Date.now();
    socket.write(`POST /v1/requests HTTP/1.1\r\nHost: relay\r\n${auth()}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
    const chunk = "x".repeat(64 * 1024);
    const frame = `${chunk.length.toString(16)}\r\n${chunk}\r\n`;
    const send = () => {
      while (!socket.destroyed && socket.write(frame));
    };
    socket.on("drain", send);
    send();
    const end = await closed;
    expect(end - started).toBeLessThan(DISCARD_BOUNDS.ms + 3000);
    expect(received).toMatch(/^HTTP\/1\.1 413 /);
    expect(received).toContain('"code":"relay_body_too_large"');
    await nothingChanged();
  });

  it("a streamed body with no Content-Length is cut off at the limit → 413", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.length;
        if (sent > 50 * 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${relay.url}/v1/requests`, {
      method: "POST",
      body: stream,
      duplex: "half",
      headers: { authorization: `Bearer ${relay.tokens[0]!.token}`, "content-type": "application/json" },
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(sent).toBeLessThan(50 * 1024 * 1024);
    await nothingChanged();
  });

  it("a refusal before an endless streamed body is read closes the connection instead of draining it", async () => {
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += chunk.length;
        if (sent > 50 * 1024 * 1024) controller.close();
        else controller.enqueue(chunk);
      },
    });
    const response = await fetch(`${relay.url}/v1/requests`, {
      method: "POST",
      body: stream,
      duplex: "half",
      headers: { authorization: "Bearer tok_not_configured_0000000", "content-type": "application/json" },
    } as RequestInit);
    expect(response.status).toBe(401);
    expect(response.headers.get("connection")).toBe("close");
    expect(sent).toBeLessThan(50 * 1024 * 1024);
    await nothingChanged();
  });

  it("a Content-Length over the limit → 413 before any body byte is sent", async () => {
    const reply = await raw(`POST /v1/requests HTTP/1.1\r\nHost: relay\r\n${auth()}Content-Type: application/json\r\nContent-Length: 5000000\r\n\r\n`);
    expect(reply).toMatch(/^HTTP\/1\.1 413 /);
    expect(reply).toMatch(/\r\nConnection: close\r\n/i);
    await nothingChanged();
  });

  it("a Content-Length shorter than the body reads only what was declared; the rest is refused as bad HTTP", async () => {
    const body = JSON.stringify(bodies.stepGate());
    const reply = await raw(`POST /v1/requests HTTP/1.1\r\nHost: relay\r\n${auth()}Content-Type: application/json\r\nContent-Length: 10\r\n\r\n${body}`);
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toMatch(/"code":"relay_(bad_http|invalid_json)"/);
    await nothingChanged();
    expect((await relay.call("/healthz")).status).toBe(200);
  });

  it("a client that sends less than its Content-Length and hangs up creates nothing", async () => {
    const reply = await raw(`POST /v1/requests HTTP/1.1\r\nHost: relay\r\n${auth()}Content-Type: application/json\r\nContent-Length: 500\r\n\r\n{"kind":`, {
      end: true,
    });
    expect(reply).not.toMatch(/ 5\d\d /);
    await nothingChanged();
    expect(relay.logs.filter((line) => line.includes('"level":"error"'))).toEqual([]);
  });
});
