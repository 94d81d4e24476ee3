import { describe, expect, it } from "vitest";
import { CreateRequestBody } from "../../../src/protocol/request-body.js";
import { sameRequestBody } from "../../../src/requests/idempotency.js";

const parse = (body: unknown) => CreateRequestBody.parse(body);
const gate = { kind: "step_gate", toolName: "Bash", input: { command: "make deploy", env: { stage: "prod", region: "eu" } } };

describe("sameRequestBody", () => {
  it("a retry with the same fields in another order, or with the key moved to the header, is the same request", () => {
    const first = parse({ ...gate, idempotencyKey: "deploy-1" });
    const reordered = parse({ input: { env: { region: "eu", stage: "prod" }, command: "make deploy" }, toolName: "Bash", kind: "step_gate" });
    expect(sameRequestBody(first, reordered)).toBe(true);
  });

  it("another value anywhere, an added field or a reordered list is another request", () => {
    const first = parse(gate);
    expect(sameRequestBody(first, parse({ ...gate, input: { ...gate.input, command: "make destroy" } }))).toBe(false);
    expect(sameRequestBody(first, parse({ ...gate, title: "Deploy" }))).toBe(false);
    expect(sameRequestBody(first, parse({ ...gate, toolName: "Write" }))).toBe(false);
    const list = parse({ ...gate, input: { args: ["a", "b"] } });
    expect(sameRequestBody(list, parse({ ...gate, input: { args: ["b", "a"] } }))).toBe(false);
  });
});
