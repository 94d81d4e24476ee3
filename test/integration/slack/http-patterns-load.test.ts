/**
 * A valid answer is never refused because the machine is busy: with every
 * core kept busy by spinning child processes, an InteractiveQuestion whose
 * default and typed answer match their pattern is created and answered
 * through the real Bolt receiver, many times over (issue 20 item 6: the
 * old VM time limit refused `[A-Z]+-[0-9]+` on "OPS-1" under load).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { availableParallelism } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { Action, encodeButton, Field, View } from "../../../src/slack/ids.js";
import { useSlackRelay, type SlackRelay } from "../../helpers/slack-relay.js";
import { blockAction, CHANNEL, MESSAGE_TS, state, viewSubmission } from "../../helpers/slack.js";

let relay: SlackRelay;
useSlackRelay((started) => (relay = started));

const spinners: ChildProcess[] = [];
afterEach(() => {
  for (const child of spinners.splice(0)) child.kill("SIGKILL");
});

/** One spinning process per core and one more, each running until killed. */
async function saturateCpu(): Promise<void> {
  for (let i = 0; i <= availableParallelism(); i += 1) {
    const child = spawn(process.execPath, ["-e", "process.stdout.write('spinning\\n'); for (;;) {}"], { stdio: ["ignore", "pipe", "ignore"] });
    spinners.push(child);
    await new Promise((resolve) => child.stdout!.once("data", resolve));
  }
}

const ticket = { id: "ticket", question: "Change ticket?", type: "text", pattern: "[A-Z]+-[0-9]+" };

describe("patterns under a saturated CPU", () => {
  it("a default matching its pattern is accepted, and a typed answer matching it is recorded, every time", async () => {
    const rounds = 10;
    relay.api
      .onPost(MESSAGE_TS, CHANNEL, rounds + 1)
      .on("views.open")
      .on("chat.update");
    await saturateCpu();
    for (let round = 0; round < rounds; round += 1) {
      const withDefault = await relay.create({ kind: "interactive_questions", questions: [{ ...ticket, default: "OPS-1", required: false }] });
      expect(withDefault.status).toBe("pending");
    }
    const record = await relay.create({ kind: "interactive_questions", questions: [ticket] });
    await relay.post(blockAction({ actionId: Action.answer, value: encodeButton({ r: record.id }) }));
    await relay.settle();
    const view = relay.api.callsTo("views.open").at(-1)?.args.view as { private_metadata: string };
    const response = await relay.post(
      viewSubmission({
        callbackId: View.answer,
        privateMetadata: view.private_metadata,
        values: { [Field.question(0).block]: { [Field.question(0).action]: state.text("OPS-1") } },
      }),
    );
    expect(response.status).toBe(200);
    expect(response.text).toBe("");
    const answered = await relay.service.wait(record.id, 5000);
    expect(answered?.decision).toStrictEqual({ answers: { ticket: "OPS-1" } });
    await relay.settle();
    relay.api.done();
  });
});
