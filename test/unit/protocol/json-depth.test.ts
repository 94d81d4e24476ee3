import { describe, expect, it } from "vitest";
import { depthProblem, fieldNestedDeeperThan, MAX_DEPTH, nestsDeeperThan } from "../../../src/protocol/json-depth.js";

describe("fieldNestedDeeperThan", () => {
  it("counts the body itself as level 1", () => {
    expect(fieldNestedDeeperThan({ a: { b: {} } }, 3)).toBeUndefined();
    expect(fieldNestedDeeperThan({ a: { b: {} } }, 2)).toBe("a");
  });

  it("does not overflow the stack on very deep values", () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    expect(fieldNestedDeeperThan({ x: 1, input: deep }, 64)).toBe("input");
  });
});

describe("nestsDeeperThan", () => {
  it("counts an object or array as level 1 and a plain value as level 0", () => {
    expect(nestsDeeperThan("text", 0)).toBe(false);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan({}, 1)).toBe(false);
    expect(nestsDeeperThan([[{}]], 2)).toBe(true);
    expect(nestsDeeperThan([[{}]], 3)).toBe(false);
  });

  it("does not overflow the stack on very deep values", () => {
    let deep: unknown = [];
    for (let i = 0; i < 200_000; i += 1) deep = [deep];
    expect(nestsDeeperThan(deep, MAX_DEPTH)).toBe(true);
  });
});

describe("depthProblem", () => {
  it("names the top-level field that nests deeper than MAX_DEPTH, and nothing for a body within it", () => {
    let deep: unknown = {};
    for (let i = 0; i < MAX_DEPTH; i += 1) deep = { a: deep };
    expect(depthProblem({ ok: 1, input: deep })).toEqual({ path: "input", message: `nests deeper than ${MAX_DEPTH} levels` });
    expect(depthProblem({ ok: { a: [1] } })).toBeUndefined();
  });
});
