/**
 * Reads a JSON request body with a byte limit. The limit is checked against
 * Content-Length before anything is read and against the bytes as they
 * arrive, so an oversized body is never buffered: reading stops at the first
 * byte past the limit and the caller answers 413 and closes the connection.
 */
import type { IncomingMessage } from "node:http";
import { RelayError } from "../requests/errors.js";

/** The client went away before its body arrived; there is no one to answer. */
export class ClientGoneError extends Error {
  constructor() {
    super("the client closed the connection while sending its body");
    this.name = "ClientGoneError";
  }
}

/** application/json, or any +json type (application/merge-patch+json, …), with optional parameters. */
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/** Throws relay_unsupported_media_type unless the request says it carries (uncompressed) JSON. */
export function assertJsonContent(req: IncomingMessage): void {
  const type = req.headers["content-type"];
  if (type === undefined || !JSON_TYPE.test(type)) {
    throw new RelayError("relay_unsupported_media_type", "Send the body as JSON with 'Content-Type: application/json'.");
  }
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") {
    throw new RelayError("relay_unsupported_media_type", "Send the body uncompressed (no Content-Encoding).");
  }
}

/** Throws relay_body_too_large when the declared Content-Length is over `limit` bytes. */
export function assertDeclaredLength(req: IncomingMessage, limit: number): void {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(limit);
}

/** The body as UTF-8 text, at most `limit` bytes. */
export function readText(req: IncomingMessage, limit: number): Promise<string> {
  assertDeclaredLength(req, limit);
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onGone);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.pause();
        chunks.length = 0;
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks, size).toString("utf8"));
    };
    const onGone = () => {
      cleanup();
      reject(new ClientGoneError());
    };
    const onClose = () => {
      if (!req.complete) onGone();
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onGone);
    req.on("close", onClose);
  });
}

/** Reads and parses a JSON body: 415 for another type, 413 over `limit` bytes, 400 for invalid JSON. */
export async function readJson(req: IncomingMessage, limit: number): Promise<unknown> {
  assertJsonContent(req);
  const text = await readText(req, limit);
  try {
    return JSON.parse(text);
  } catch {
    throw new RelayError("relay_invalid_json", "The body is not valid JSON.");
  }
}

function tooLarge(limit: number): RelayError {
  return new RelayError("relay_body_too_large", `The body is larger than ${limit} bytes.`, { limitBytes: limit });
}
