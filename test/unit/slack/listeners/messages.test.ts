import { describe, expect, it } from "vitest";
import { silentLogger } from "../../../../src/logger.js";
import { StoreUnavailableError } from "../../../../src/requests/errors.js";
import type { RequestRecord } from "../../../../src/requests/model.js";
import { NOT_RECORDED_REPLY, STORE_BUDGET, type ListenerDeps } from "../../../../src/slack/listeners/context.js";
import { handleReply, parseStepReply, parseThreadReply } from "../../../../src/slack/listeners/messages.js";
import { CHANNEL, MESSAGE_TS, messageEvent, recordOf } from "../../../helpers/slack.js";
import { ALICE } from "../../../fixtures/people.js";

const stepGate = recordOf({ kind: "step_gate", toolName: "Bash", input: { command: "rm -rf build" } });

describe("thread replies to a step gate", () => {
  it.each([
    ["y", "y"],
    ["yes", "y"],
    ["Y", "y"],
    ["  YES \n", "y"],
    ["n", "n"],
    ["no", "n"],
    ["No", "n"],
    ["q", "q"],
    [" Q ", "q"],
  ])("%j answers %s", (text, reply) => {
    expect(parseStepReply(text)).toBe(reply);
    expect(parseThreadReply(stepGate, text)).toEqual({ reply });
  });

  it.each([["nope"], ["yes please"], ["quit"], ["y?"], [""], ["lgtm"], ["n o"]])("%j is chatter, never taken as an answer (not even No)", (text) => {
    expect(parseStepReply(text)).toBeUndefined();
    expect(parseThreadReply(stepGate, text)).toBeUndefined();
  });
});

describe("thread replies to an AskUserQuestion", () => {
  const ask = recordOf({
    kind: "ask_user_question",
    questions: [
      { question: "Which colour?", header: "Colour", options: [{ label: "Red" }, { label: "Blue" }] },
      { question: "Which size?", header: "Size", options: [{ label: "S" }, { label: "L" }] },
    ],
  });

  it("any text answers every question in free text and is kept as the response", () => {
    expect(parseThreadReply(ask, "  Red, and make it large  ")).toEqual({
      answers: { "Which colour?": "Red, and make it large", "Which size?": "Red, and make it large" },
      response: "Red, and make it large",
    });
  });

  it("an empty reply answers nothing", () => {
    expect(parseThreadReply(ask, "   ")).toBeUndefined();
  });
});

describe("thread replies to other kinds", () => {
  it("a permission request is never answered from its thread", () => {
    const permission = recordOf({ kind: "permission", toolName: "Bash", input: { command: "ls" } });
    expect(parseThreadReply(permission, "yes")).toBeUndefined();
  });

  it("interactive questions are never answered from their thread", () => {
    const interactive = recordOf({ kind: "interactive_questions", questions: [{ id: "ok", question: "OK?", type: "confirm" }] });
    expect(parseThreadReply(interactive, "yes")).toBeUndefined();
  });
});

describe("thread replies when the store fails", () => {
  const pending = { ...stepGate, slack: { channel: CHANNEL, ts: MESSAGE_TS } };
  const never = () => new Promise<never>(() => {});

  function depsWith(service: Partial<ListenerDeps["service"]>) {
    const told: unknown[] = [];
    const deps = {
      service: { answerFromMessage: never, ...service },
      client: { chat: { postEphemeral: async (args: unknown) => void told.push(args) } },
      logger: silentLogger,
    } as unknown as ListenerDeps;
    return { deps, told };
  }
  /** The service's answerFromMessage on a store that holds `record` and answers every decision with `answer`. */
  const onStored =
    (record: RequestRecord, answer: () => Promise<never>): ListenerDeps["service"]["answerFromMessage"] =>
    async ({ read }) => {
      const reading = read(record);
      return "none" in reading ? { outcome: "no_answer", record, none: reading.none } : answer();
    };
  const reply = (text: string) => messageEvent({ text, threadTs: MESSAGE_TS }).event;
  const notice = { channel: CHANNEL, user: ALICE.id, thread_ts: MESSAGE_TS, text: NOT_RECORDED_REPLY };

  it("a store that never answers: the person is told in the thread once the store budget is spent", { timeout: 5000 }, async () => {
    const { deps, told } = depsWith({});
    const started = performance.now();
    await handleReply(deps, reply("y"));
    expect(performance.now() - started).toBeGreaterThanOrEqual(STORE_BUDGET.totalMs - 20);
    expect(told).toEqual([notice]);
  });

  it("a store that throws on the answer: the person is told in the thread", async () => {
    const { deps, told } = depsWith({
      answerFromMessage: onStored(pending, async () => {
        throw new StoreUnavailableError("down");
      }),
    });
    await handleReply(deps, reply("n"));
    expect(told).toEqual([notice]);
  });

  it("chatter read fine from a working store is still ignored silently", async () => {
    const { deps, told } = depsWith({ answerFromMessage: onStored(pending, never) });
    await handleReply(deps, reply("looks risky"));
    expect(told).toEqual([]);
  });
});

describe("thread replies to a request that has ended", () => {
  const endedAt = Number(MESSAGE_TS) * 1000 + 60_000;
  const ended: RequestRecord = { ...stepGate, status: "cancelled" as const, endedAt, slack: { channel: CHANNEL, ts: MESSAGE_TS } };
  const tsAt = (ms: number) => (ms / 1000).toFixed(6);

  function depsReading(record: RequestRecord) {
    const told: unknown[] = [];
    const answerFromMessage: ListenerDeps["service"]["answerFromMessage"] = async ({ read }) => {
      const reading = read(record);
      if ("none" in reading) return { outcome: "no_answer", record, none: reading.none };
      throw new Error("an ended request was answered");
    };
    const deps = {
      service: { answerFromMessage },
      client: { chat: { postEphemeral: async (args: unknown) => void told.push(args) } },
      logger: silentLogger,
    } as unknown as ListenerDeps;
    return { deps, told };
  }

  it("an answer written before the end, arriving after it, is told how the request ended", async () => {
    const { deps, told } = depsReading(ended);
    await handleReply(deps, messageEvent({ text: "n", threadTs: MESSAGE_TS, ts: tsAt(endedAt - 80) }).event);
    expect(told).toEqual([{ channel: CHANNEL, user: ALICE.id, thread_ts: MESSAGE_TS, text: "This request was cancelled." }]);
  });

  it("an answer written after the end, and chatter written before it, are ignored silently", async () => {
    const { deps, told } = depsReading(ended);
    await handleReply(deps, messageEvent({ text: "n", threadTs: MESSAGE_TS, ts: tsAt(endedAt + 1_000) }).event);
    await handleReply(deps, messageEvent({ text: "hmm, wait", threadTs: MESSAGE_TS, ts: tsAt(endedAt - 80) }).event);
    expect(told).toEqual([]);
  });
});
