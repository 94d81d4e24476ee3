import type { IncomingMessage } from "node:http";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { readJson } from "../../../src/http/body.js";
import { RelayError } from "../../../src/requests/errors.js";

/** A stand-in IncomingMessage: a stream with headers. */
function incoming(headers: Record<string, string>, chunks: Array<string | Buffer>) {
  const stream = new PassThrough() as PassThrough & { headers: Record<string, string>; complete: boolean };
  stream.headers = headers;
  stream.complete = false;
  setImmediate(() => {
    for (const chunk of chunks) stream.write(chunk);
    stream.complete = true;
    stream.end();
  });
  return stream as unknown as IncomingMessage & PassThrough;
}

async function code(promise: Promise<unknown>) {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RelayError) return error.code;
    throw error;
  }
  return "accepted";
}

const json = { "content-type": "application/json" };

describe("readJson", () => {
  it("parses a JSON body that arrives in pieces, multi-byte characters split across them", async () => {
    const bytes = Buffer.from(JSON.stringify({ text: "héllo ✅" }));
    const req = incoming(json, [bytes.subarray(0, 11), bytes.subarray(11)]);
    await expect(readJson(req, 1000)).resolves.toEqual({ text: "héllo ✅" });
  });

  it.each(["application/json", "application/json; charset=utf-8", "APPLICATION/JSON", "application/merge-patch+json"])("accepts %s", async (type) => {
    await expect(readJson(incoming({ "content-type": type }, ["{}"]), 100)).resolves.toEqual({});
  });

  it.each(["text/plain", "application/x-www-form-urlencoded", "application/jsonp", "multipart/form-data"])("refuses %s with 415", async (type) => {
    expect(await code(readJson(incoming({ "content-type": type }, ["{}"]), 100))).toBe("relay_unsupported_media_type");
  });

  it("refuses a body without a content type, or compressed, with 415", async () => {
    expect(await code(readJson(incoming({}, ["{}"]), 100))).toBe("relay_unsupported_media_type");
    expect(await code(readJson(incoming({ ...json, "content-encoding": "gzip" }, ["{}"]), 100))).toBe("relay_unsupported_media_type");
  });

  it("refuses a declared length over the limit before reading anything", async () => {
    const req = incoming({ ...json, "content-length": "101" }, ["{}"]);
    expect(await code(readJson(req, 100))).toBe("relay_body_too_large");
    expect(req.listenerCount("data")).toBe(0);
  });

  it("stops reading at the first chunk past the limit, whatever the declared length", async () => {
    const req = incoming({ ...json, "content-length": "10" }, ["[1,", "2,3,4,5,6,7,8,9]", "more"]);
    expect(await code(readJson(req, 10))).toBe("relay_body_too_large");
    expect(req.listenerCount("data")).toBe(0);
    expect(req.isPaused()).toBe(true);
  });

  it("refuses an empty or invalid body as invalid JSON", async () => {
    expect(await code(readJson(incoming(json, []), 100))).toBe("relay_invalid_json");
    expect(await code(readJson(incoming(json, ['{"a":']), 100))).toBe("relay_invalid_json");
  });
});
