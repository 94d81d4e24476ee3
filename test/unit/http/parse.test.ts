import { describe, expect, it } from "vitest";
import { MAX_DEPTH } from "../../../src/protocol/json-depth.js";
import { parseCreateBody, pickIdempotencyKey } from "../../../src/http/parse.js";
import { RelayError } from "../../../src/requests/errors.js";

const bash = { kind: "permission", toolName: "Bash", input: { command: "ls" } };

function paths(value: unknown): string[] {
  try {
    parseCreateBody(value);
  } catch (error) {
    if (error instanceof RelayError && error.code === "relay_invalid_request") {
      return (error.details as Array<{ path: string }>).map((p) => p.path);
    }
    throw error;
  }
  throw new Error("accepted");
}

describe("parseCreateBody", () => {
  it("returns the parsed body with defaults applied", () => {
    const body = parseCreateBody({ kind: "ask_user_question", questions: [{ question: "Which?", options: [{ label: "a" }, { label: "b" }] }] });
    expect(body).toMatchObject({ questions: [{ header: "", multiSelect: false, options: [{ label: "a", description: "" }, { label: "b" }] }] });
  });

  it("names each unknown field by its path", () => {
    expect(paths({ ...bash, colour: "red", size: 3 })).toEqual(["colour", "size"]);
  });

  it("says a missing field is required", () => {
    expect(() => parseCreateBody({ kind: "step_gate", input: {} })).toThrow(/toolName: is required/);
  });

  it("refuses a body that is not an object, naming the body", () => {
    for (const value of [[], "text", 3, null, true]) expect(paths(value)).toEqual(["(body)"]);
  });

  it("refuses nesting deeper than the limit under the field that nests", () => {
    let deep: unknown = {};
    for (let i = 0; i < MAX_DEPTH; i += 1) deep = [deep];
    expect(paths({ ...bash, input: { deep } })).toEqual(["input"]);
  });
});

describe("pickIdempotencyKey", () => {
  const body = (idempotencyKey?: string) => parseCreateBody({ ...bash, ...(idempotencyKey ? { idempotencyKey } : {}) });

  it("takes the key from the body or the header", () => {
    expect(pickIdempotencyKey(body("k1"), undefined)).toBe("k1");
    expect(pickIdempotencyKey(body(), "k2")).toBe("k2");
    expect(pickIdempotencyKey(body("k3"), "k3")).toBe("k3");
    expect(pickIdempotencyKey(body(), undefined)).toBeUndefined();
  });

  it("refuses two different keys", () => {
    expect(() => pickIdempotencyKey(body("k1"), "k2")).toThrow(/idempotencyKey: differs/);
  });

  it("refuses an empty or overlong header", () => {
    expect(() => pickIdempotencyKey(body(), "")).toThrow(/Idempotency-Key/);
    expect(() => pickIdempotencyKey(body(), "k".repeat(256))).toThrow(/Idempotency-Key/);
  });
});
