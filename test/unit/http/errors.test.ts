import { describe, expect, it } from "vitest";
import { ClientGoneError } from "../../../src/http/body.js";
import { errorReply, methodNotAllowed } from "../../../src/http/errors.js";
import { createLogger } from "../../../src/logger.js";
import { invalidRequest, RelayError } from "../../../src/requests/errors.js";

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ level: "debug", write: (line) => lines.push(line) }) };
}
const scene = { method: "POST", path: "/v1/requests" };

describe("errorReply", () => {
  it("gives a RelayError its status, code, message and details", () => {
    const { logger, lines } = capture();
    const reply = errorReply(invalidRequest([{ path: "kind", message: "bad" }]), logger, scene);
    expect(reply).toEqual({
      status: 400,
      body: { error: { code: "relay_invalid_request", message: "Invalid request: kind: bad", details: [{ path: "kind", message: "bad" }] } },
    });
    expect(lines).toEqual([]);
  });

  it("challenges for a bearer token on 401", () => {
    const reply = errorReply(new RelayError("relay_unauthorized", "no"), capture().logger, scene);
    expect(reply).toMatchObject({ status: 401, headers: { "WWW-Authenticate": "Bearer" } });
  });

  it("lists the allowed methods in the Allow header on 405", () => {
    const reply = errorReply(methodNotAllowed("GET, DELETE"), capture().logger, scene);
    expect(reply).toMatchObject({ status: 405, headers: { Allow: "GET, DELETE" }, body: { error: { details: { allow: ["GET", "DELETE"] } } } });
  });

  it("closes the connection after 413", () => {
    expect(errorReply(new RelayError("relay_body_too_large", "big"), capture().logger, scene)).toMatchObject({ status: 413, close: true });
  });

  it("turns any other error into a 500 with a reference that is logged, and no internal message", () => {
    const { logger, lines } = capture();
    const reply = errorReply(new TypeError("secret internals at /srv/app.js"), logger, scene);
    const body = reply.body as { error: { code: string; message: string; details: { requestId: string } } };
    expect(reply.status).toBe(500);
    expect(body.error.code).toBe("relay_internal_error");
    expect(JSON.stringify(body)).not.toContain("secret internals");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", requestId: body.error.details.requestId, path: "/v1/requests" });
  });

  it("treats a client that left mid-body as its own doing, not a 500", () => {
    const { logger, lines } = capture();
    expect(errorReply(new ClientGoneError(), logger, scene).status).toBe(400);
    expect(lines.map((l) => JSON.parse(l).level)).toEqual(["debug"]);
  });
});
