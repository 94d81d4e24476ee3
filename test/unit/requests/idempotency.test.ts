import { describe, expect, it } from "vitest";
import { CreateRequestBody } from "../../../src/protocol/request-body.js";
import { askKey, sameRequestBody } from "../../../src/requests/idempotency.js";

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

describe("askKey: what a repeated tool call joins", () => {
  const session = { ...gate, agent: { sessionId: "s1" } };
  it("is the same for the same token, session, kind, tool and input, whatever the order of the input's keys or the other fields", () => {
    const key = askKey("ci", parse(session));
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(askKey("ci", parse({ ...session, title: "again", input: { env: { region: "eu", stage: "prod" }, command: "make deploy" } }))).toBe(key);
    for (const other of [
      askKey("deploy-bot", parse(session)),
      askKey("ci", parse({ ...session, agent: { sessionId: "s2" } })),
      askKey("ci", parse({ ...session, kind: "permission" })),
      askKey("ci", parse({ ...session, toolName: "Write" })),
      askKey("ci", parse({ ...session, input: { command: "make destroy" } })),
    ]) {
      expect(other).not.toBe(key);
    }
  });

  it("is none without a session, for a question, with a callback URL, or with an idempotency key unless the create joins on it (a hook call)", () => {
    expect(askKey("ci", parse(gate))).toBeUndefined();
    const question = parse({ kind: "interactive_questions", questions: [{ id: "go", question: "Go?", type: "confirm" }], agent: { sessionId: "s1" } });
    expect(askKey("ci", question)).toBeUndefined();
    expect(askKey("ci", parse({ ...session, callbackUrl: "https://hooks.example.com/done" }))).toBeUndefined();
    expect(askKey("ci", parse(session), { idempotencyKey: "k1" })).toBeUndefined();
    expect(askKey("ci", parse(session), { idempotencyKey: "k1", joinOnKey: true })).toBe(askKey("ci", parse(session)));
  });
});
