/**
 * A test's script for the Slack Web API stand-in (./slack-web-api.ts): the
 * answers a test expects the relay to ask for, in order per method, and the
 * check that it asked for each of them and for nothing else. The stand-in
 * stays the one fake of Slack; the script is how a Slack-side test says
 * "the relay posts once, Slack refuses the first update, then accepts it"
 * and fails when the relay makes a call the test did not foresee (a second
 * thread reply, an extra update). A call nobody scripted still gets the
 * stand-in's own answer, so the relay sees Slack and the test sees the call
 * in `unexpected`.
 */
import { RELAY_BOT } from "../fixtures/people.js";
import type { Answer, ApiCall, SlackWebApiStandIn } from "./slack-web-api.js";
import { CHANNEL, MESSAGE_TS } from "./slack.js";

/** One scripted answer: the stand-in's Answer (a reply, an HTTP error, "hang"), or one made from the call's arguments. */
export type ScriptedAnswer = Answer | ((args: Record<string, unknown>) => Answer | Promise<Answer>);

interface Entry {
  answer: ScriptedAnswer | "drop";
  left: number;
}

export class SlackScript {
  /** The scripted calls the relay made, oldest first, as `{ method, args }`. */
  readonly calls: ApiCall[] = [];
  /** Calls no entry of the script expected, as "POST <method>". */
  readonly unexpected: string[] = [];
  private readonly entries = new Map<string, Entry[]>();

  constructor(readonly standIn: SlackWebApiStandIn) {
    standIn.answer("*", (args, call) => this.play(call.method, args));
  }

  /** Base URL for SLACK_API_URL. */
  get url(): string {
    return this.standIn.url;
  }

  /** Answers the next `times` calls of `method` with `answer` (Slack's `{ ok: true }` by default), after what is already scripted for it. */
  on(method: string, answer: ScriptedAnswer = { ok: true }, times = 1): this {
    return this.expect(method, answer, times);
  }

  /** The next `times` calls of `method` run on the stand-in, which then drops the connection instead of replying (a reply lost on the way back). */
  onDrop(method: string, times = 1): this {
    return this.expect(method, "drop", times);
  }

  /** chat.postMessage answered like Slack: the channel id and the ts given (the same one `times` times). */
  onPost(ts = MESSAGE_TS, channel = CHANNEL, times = 1): this {
    return this.on("chat.postMessage", { ok: true, channel, ts, message: { ts } }, times);
  }

  /**
   * What the relay asks to find a request's messages (auth.test for its bot
   * id, once; then conversations.history `times` times), answered with
   * `messages` as the channel's history.
   */
  onHistory(messages: unknown[] = [], times = 1): this {
    return this.on("auth.test", { ok: true, user_id: RELAY_BOT.userId, bot_id: RELAY_BOT.botId }).on(
      "conversations.history",
      { ok: true, messages, has_more: false },
      times,
    );
  }

  callsTo(method: string): ApiCall[] {
    return this.calls.filter((call) => call.method === method);
  }

  /** Throws unless every scripted answer was asked for. */
  done(): void {
    const pending = [...this.entries].flatMap(([method, queue]) => queue.filter((entry) => entry.left > 0).map((entry) => `${method} × ${entry.left}`));
    if (pending.length > 0) throw new Error(`Slack script: calls expected but not made: ${pending.join(", ")}`);
  }

  private expect(method: string, answer: Entry["answer"], times: number): this {
    const queue = this.entries.get(method) ?? [];
    queue.push({ answer, left: times });
    this.entries.set(method, queue);
    return this;
  }

  private async play(method: string, args: Record<string, unknown>): Promise<Answer | undefined> {
    const entry = this.entries.get(method)?.find((candidate) => candidate.left > 0);
    if (!entry) {
      this.unexpected.push(`POST ${method}`);
      return undefined;
    }
    entry.left -= 1;
    this.calls.push({ method, args });
    if (entry.answer === "drop") {
      this.standIn.dropReply(method, 1);
      return undefined;
    }
    return typeof entry.answer === "function" ? entry.answer(args) : entry.answer;
  }
}
