import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RequestEndedError } from "../../../src/client/errors.js";
import { RelayClient } from "../../../src/client/relay-client.js";
import type { InteractiveQuestionInput } from "../../../src/client/types.js";
import { RelayStandIn, TOKEN, view } from "../../helpers/relay-stand-in.js";
import { until } from "../../helpers/until.js";

let relay: RelayStandIn;
let client: RelayClient;
beforeEach(async () => {
  relay = await new RelayStandIn().start();
  client = new RelayClient({ url: relay.url, token: TOKEN, maxWaitSeconds: 5, initialRetryDelayMs: 20, maxRetryDelayMs: 100, retries: 1 });
});
afterEach(async () => {
  await relay.stop();
});

const questions: InteractiveQuestionInput[] = [
  { id: "env", question: "Which environment?", type: "choice", options: ["staging", "production"] },
  { id: "flags", question: "Which flags?", type: "multiChoice", options: ["a", "b"] },
  { id: "note", question: "Release note?", type: "text", required: false, default: "" },
  { id: "go", question: "Go ahead?", type: "confirm" },
];

describe("RelayClient.askInteractive", () => {
  it("when given labels and requestedBy, the request carries them", async () => {
    const next = relay.nextRequest();
    const asking = client.askInteractive([questions[3]!], { labels: { env: "prod" }, requestedBy: { email: "alice@example.com" } });
    const request = await next;
    expect(request.body).toEqual({
      kind: "interactive_questions",
      questions: [questions[3]],
      labels: { env: "prod" },
      requestedBy: { email: "alice@example.com" },
    });
    relay.answer(request.id, { answers: { go: true } });
    await expect(asking).resolves.toEqual({ go: true });
  });

  it("when the person answers, the answers come back keyed by question id", async () => {
    const answers = { env: "production", flags: ["a", "b"], note: "Fixes #12", go: true };
    const next = relay.nextRequest();
    const asking = client.askInteractive(questions, { channel: "C0123456789", title: "Release", timeoutSeconds: 120, autonomous: true });
    const request = await next;
    expect(request.body).toEqual({ kind: "interactive_questions", questions, channel: "C0123456789", title: "Release", timeoutSeconds: 120, autonomous: true });
    relay.answer(request.id, { answers });
    await expect(asking).resolves.toEqual(answers);
  });

  it("when the relay answers at once (autonomous mode, every question has a default), the answers come back without a wait", async () => {
    relay.fault = (call) => {
      if (call.method !== "POST") return undefined;
      const now = Date.now();
      return {
        status: 201,
        json: view({
          id: "r5",
          body: { kind: "interactive_questions" },
          idempotencyKey: undefined,
          status: "answered",
          createdAt: now,
          expiresAt: now,
          decision: { answers: { note: "" } },
        }),
      };
    };
    await expect(client.askInteractive([questions[2]!], { autonomous: true })).resolves.toEqual({ note: "" });
  });

  for (const [status, pattern] of [
    ["expired", /No one answered in Slack within 10 minutes/],
    ["cancelled", /cancelled/],
    ["failed", /could not be posted to Slack \(not_in_channel\)/],
  ] as const) {
    it(`when the request ends ${status}, it rejects with a RequestEndedError that says so`, async () => {
      const next = relay.nextRequest();
      const asking = client.askInteractive(questions);
      relay.end((await next).id, { status, error: "not_in_channel" });
      const failure = await asking.catch((e: unknown) => e);
      expect(failure).toBeInstanceOf(RequestEndedError);
      expect(failure).toMatchObject({ status, message: expect.stringMatching(pattern) });
    });
  }

  it("when the answer is not an answers object, it rejects", async () => {
    const next = relay.nextRequest();
    const asking = client.askInteractive(questions);
    relay.answer((await next).id, { reply: "y" });
    await expect(asking).rejects.toMatchObject({ code: "relay_bad_reply" });
  });

  it("when the signal aborts, the request is cancelled on the relay and it rejects with an AbortError", async () => {
    const controller = new AbortController();
    const next = relay.nextRequest();
    const asking = client.askInteractive(questions, { signal: controller.signal });
    const request = await next;
    await until(() => relay.calls.some((c) => c.method === "GET"));
    controller.abort();
    await expect(asking).rejects.toMatchObject({ name: "AbortError" });
    expect(relay.requests.get(request.id)!.status).toBe("cancelled");
  });
});
