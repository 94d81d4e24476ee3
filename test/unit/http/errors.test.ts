import { describe, expect, it } from "vitest";
import { errorReply, methodNotAllowed, statusOf } from "../../../src/http/errors.js";
import { createLogger } from "../../../src/logger.js";
import { invalidRequest, RelayError, StoreUnavailableError } from "../../../src/requests/errors.js";

function capture() {
  const lines: string[] = [];
  const log = createLogger({ level: "debug", write: (line) => lines.push(line) });
  return { lines, scene: { log, requestId: "req-7", bodyLimitBytes: 1000 } };
}

describe("errorReply", () => {
  it.each([
    ["relay_invalid_json", 400],
    ["relay_invalid_request", 400],
    ["relay_unauthorized", 401],
    ["relay_forbidden", 403],
    ["relay_not_found", 404],
    ["relay_method_not_allowed", 405],
    ["relay_body_too_large", 413],
    ["relay_unsupported_media_type", 415],
    ["relay_already_answered", 409],
    ["relay_already_ended", 409],
    ["relay_idempotency_mismatch", 409],
    ["relay_not_ready", 503],
    ["relay_store_unavailable", 503],
    ["relay_shutting_down", 503],
    ["relay_slack_unavailable", 503],
  ] as const)("answers the domain's %s with %i: the statuses live here, not on the domain's errors", (code, status) => {
    expect(statusOf(code)).toBe(status);
    expect(errorReply(new RelayError(code, "refused"), capture().scene).status).toBe(status);
  });

  it("gives a RelayError its status, code, message and details", () => {
    const { scene, lines } = capture();
    const reply = errorReply(invalidRequest([{ path: "kind", message: "bad" }]), scene);
    expect(reply).toEqual({
      status: 400,
      body: { error: { code: "relay_invalid_request", message: "Invalid request: kind: bad", details: [{ path: "kind", message: "bad" }] } },
      headers: {},
    });
    expect(lines).toEqual([]);
  });

  it("challenges for a bearer token on 401", () => {
    const reply = errorReply(new RelayError("relay_unauthorized", "no"), capture().scene);
    expect(reply).toMatchObject({ status: 401, headers: { "WWW-Authenticate": "Bearer" } });
  });

  it("lists the allowed methods in the Allow header on 405", () => {
    const reply = errorReply(methodNotAllowed(["GET", "DELETE"]), capture().scene);
    expect(reply).toMatchObject({ status: 405, headers: { Allow: "GET, DELETE" }, body: { error: { details: { allow: ["GET", "DELETE"] } } } });
  });

  it("answers a store outage with 503 relay_store_unavailable and Retry-After, logging the reason but never showing it", () => {
    const { scene, lines } = capture();
    const reply = errorReply(new StoreUnavailableError("connect ECONNREFUSED 10.1.2.3:6379"), scene);
    expect(reply).toEqual({
      status: 503,
      body: { error: { code: "relay_store_unavailable", message: expect.stringMatching(/storage is unavailable/) } },
      headers: { "Retry-After": "2" },
    });
    expect(JSON.stringify(reply.body)).not.toContain("10.1.2.3");
    expect(lines.map((line) => JSON.parse(line))).toEqual([expect.objectContaining({ level: "warn", reason: "connect ECONNREFUSED 10.1.2.3:6379" })]);
  });

  it("closes the connection after 413", () => {
    expect(errorReply(new RelayError("relay_body_too_large", "big"), capture().scene)).toMatchObject({ status: 413, headers: { Connection: "close" } });
  });

  it("turns any other error into a 500 quoting the request id as its reference, logged, and no internal message", () => {
    const { scene, lines } = capture();
    const reply = errorReply(new TypeError("secret internals at /srv/app.js"), scene);
    const body = reply.body as { error: { code: string; message: string; details: { requestId: string } } };
    expect(reply.status).toBe(500);
    expect(body.error.code).toBe("relay_internal_error");
    expect(body.error.details.requestId).toBe("req-7");
    expect(body.error.message).toContain("reference req-7");
    expect(JSON.stringify(body)).not.toContain("secret internals");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", error: { name: "TypeError" } });
  });

  it("gives Fastify's refusals the relay's codes: a body over the limit, a type it cannot read", () => {
    const tooLarge = Object.assign(new Error("Request body is too large"), { code: "FST_ERR_CTP_BODY_TOO_LARGE", statusCode: 413 });
    expect(errorReply(tooLarge, capture().scene)).toMatchObject({
      status: 413,
      body: { error: { code: "relay_body_too_large", details: { limitBytes: 1000 } } },
      headers: { Connection: "close" },
    });
    const mediaType = Object.assign(new Error("Unsupported Media Type"), { code: "FST_ERR_CTP_INVALID_MEDIA_TYPE", statusCode: 415 });
    expect(errorReply(mediaType, capture().scene)).toMatchObject({ status: 415, body: { error: { code: "relay_unsupported_media_type" } } });
  });

  it("treats a client that left mid-body as its own doing, not a 500", () => {
    const { scene, lines } = capture();
    const aborted = Object.assign(new Error("aborted"), { code: "ECONNRESET", statusCode: 400 });
    expect(errorReply(aborted, scene).status).toBe(400);
    expect(lines.map((l) => JSON.parse(l).level)).toEqual(["debug"]);
  });
});
