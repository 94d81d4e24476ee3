import { describe, expect, it } from "vitest";
import { parseWait } from "../../../src/http/wait.js";
import { RelayError } from "../../../src/requests/errors.js";

function problem(query: string) {
  try {
    parseWait(query, 60);
  } catch (error) {
    if (error instanceof RelayError) return { code: error.code, details: error.details };
    throw error;
  }
  throw new Error(`${query} was accepted`);
}

describe("parseWait", () => {
  it("reads whole and decimal seconds as milliseconds", () => {
    expect(parseWait("wait=0", 60)).toBe(0);
    expect(parseWait("wait=60", 60)).toBe(60_000);
    expect(parseWait("wait=0.3", 60)).toBe(300);
    expect(parseWait("x=1&wait=2.5", 60)).toBe(2500);
  });

  it("means no wait when the query does not name it", () => {
    expect(parseWait("", 60)).toBeUndefined();
    expect(parseWait("other=1", 60)).toBeUndefined();
    expect(parseWait("awaiting=1", 60)).toBeUndefined();
  });

  it.each(["wait=-1", "wait=61", "wait=60.5", "wait=abc", "wait=", "wait=1e1", "wait=Infinity", "wait=0x10", "wait=%201", "wait=1&wait=2"])(
    "refuses %s with a 400 on the wait field",
    (query) => {
      expect(problem(query)).toEqual({ code: "relay_invalid_request", details: [{ path: "wait", message: expect.any(String) }] });
    },
  );
});
