/**
 * How the relay's HTTP front door routes and reads bodies, over real HTTP:
 * which paths exist, what a wrong method gets, how path parameters arrive,
 * which content types are read as JSON. (These were unit tests of the
 * hand-made router and body reader that Fastify replaced; the assertions
 * are the same, made on the wire.)
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createMemoryStore } from "../../../src/store/memory-store.js";
import { bodies, startApiRelay, type ApiRelayOptions, type ApiRelay } from "../../helpers/api-relay.js";

let relay: ApiRelay | undefined;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
});

async function start(options: ApiRelayOptions = {}) {
  relay = await startApiRelay(options);
  return relay;
}

/** Sends `parts` over one connection, a pause between each, and returns the raw response. */
function rawInPieces(url: string, parts: Array<string | Buffer>): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    let received = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      received += chunk;
      if (/\r\n\r\n[\s\S]*\}$/.test(received)) socket.end();
    });
    socket.on("close", () => resolve(received));
    socket.on("error", reject);
    void (async () => {
      for (const part of parts) {
        socket.write(part);
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
  });
}

describe("paths", () => {
  it.each(["/", "/v1", "/v1/requests/", "/v1/requests/a/b", "/v1/requests/%E0%A4%A", "/healthz/", "/HEALTHZ", "//healthz"])(
    "GET %s → 404 relay_not_found, with or without a token",
    async (path) => {
      const { call } = await start();
      for (const as of [null, undefined]) {
        const response = await call(path, { as });
        expect(response.status, path).toBe(404);
        expect(response.body.error.code).toBe("relay_not_found");
        expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
      }
    },
  );

  it("a path parameter reaches the store decoded", async () => {
    const store = createMemoryStore();
    const asked: string[] = [];
    const { call } = await start({ store: { ...store, get: (id) => (asked.push(id), store.get(id)) } });
    expect((await call("/v1/requests/abc%20def")).status).toBe(404);
    expect(asked).toEqual(["abc def"]);
  });

  it("HEAD is served by the GET route, without a body", async () => {
    const { url } = await start();
    const response = await fetch(`${url}/healthz`, { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
  });

  it.each([
    ["OPTIONS", "/v1/requests/abc", "GET, DELETE, HEAD"],
    ["PROPFIND", "/v1/requests", "POST, GET, HEAD"],
    ["HEAD", "/v1/hooks/claude-code", "POST"],
    ["PUT", "/readyz", "GET, HEAD"],
  ])("%s %s → 405 with Allow: %s, before any token is asked for", async (method, path, allow) => {
    const { url } = await start();
    const response = await fetch(`${url}${path}`, { method });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe(allow);
    if (method !== "HEAD") expect(((await response.json()) as { error: { code: string } }).error.code).toBe("relay_method_not_allowed");
  });
});

describe("JSON bodies", () => {
  it("a body that arrives in pieces, a multi-byte character split across them, is read whole", async () => {
    const { url, tokens, stored } = await start();
    const body = Buffer.from(JSON.stringify(bodies.stepGate({ title: "héllo ✅" })));
    const split = body.indexOf(Buffer.from("✅")) + 1;
    const head = `POST /v1/requests HTTP/1.1\r\nHost: relay\r\nAuthorization: Bearer ${tokens[0]!.token}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
    const reply = await rawInPieces(url, [head, body.subarray(0, split), body.subarray(split)]);
    expect(reply).toMatch(/^HTTP\/1\.1 201 /);
    expect(stored[0]?.body.title).toBe("héllo ✅");
  });

  it.each(["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/merge-patch+json"])(
    "Content-Type %s is read as JSON",
    async (type) => {
      const { call } = await start();
      expect((await call("/v1/requests", { json: bodies.stepGate(), headers: { "content-type": type } })).status).toBe(201);
    },
  );

  it.each(["application/jsonp", "multipart/form-data; boundary=x", "text/plain"])("Content-Type %s → 415", async (type) => {
    const { call, stored } = await start();
    const response = await call("/v1/requests", { json: bodies.stepGate(), headers: { "content-type": type } });
    expect(response.status).toBe(415);
    expect(response.body.error.code).toBe("relay_unsupported_media_type");
    expect(stored).toEqual([]);
  });

  it("a body without a Content-Type, or none at all, → 415", async () => {
    const { url, tokens } = await start();
    const authorization = `Bearer ${tokens[0]!.token}`;
    const untyped = await fetch(`${url}/v1/requests`, { method: "POST", body: new Blob([JSON.stringify(bodies.stepGate())]), headers: { authorization } });
    expect(untyped.status).toBe(415);
    const empty = await fetch(`${url}/v1/requests`, { method: "POST", headers: { authorization } });
    expect(empty.status).toBe(415);
  });

  it("a compressed body → 415 before it is read", async () => {
    const { call } = await start();
    const response = await call("/v1/requests", { body: "\x1f\x8b not really gzip", headers: { "content-encoding": "gzip" } });
    expect(response.status).toBe(415);
    expect(response.body.error.message).toMatch(/uncompressed/);
  });

  it("an empty JSON body → 400 relay_invalid_json", async () => {
    const { call } = await start();
    const response = await call("/v1/requests", { body: "" });
    expect(response).toMatchObject({ status: 400, body: { error: { code: "relay_invalid_json" } } });
  });

  it("a body over the limit is refused with the limit named", async () => {
    const { call } = await start({ http: { bodyLimitBytes: 1000 } });
    const response = await call("/v1/requests", { json: bodies.stepGate({ context: "x".repeat(2000) }) });
    expect(response).toMatchObject({ status: 413, body: { error: { code: "relay_body_too_large", details: { limitBytes: 1000 } } } });
  });
});
