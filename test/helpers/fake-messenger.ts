/**
 * The one fake of Slack for tests that exercise the service or the agent API
 * without the Slack side (which has its own tests against Bolt and a Web API
 * stand-in): it records what the service asked for, posts land at
 * 1700000000.000101, …102, … in the record's channel, and a test can refuse
 * every later post or replace `post` / `showEnded` / `remind` / `tellOutcome`
 * outright.
 */
import type { SlackRef } from "../../src/protocol/request-view.js";
import type { RequestRecord } from "../../src/requests/model.js";
import type { ScheduleEntry } from "../../src/requests/policy.js";
import type { NoticePart } from "../../src/requests/store.js";
import type { Rule } from "../../src/requests/rules.js";
import { PermanentDeliveryError, type PostOptions, type RequestMessenger } from "../../src/requests/service.js";

export class FakeMessenger implements RequestMessenger {
  readonly posts: RequestRecord[] = [];
  /** Where each successful post landed, in order. */
  readonly refs: SlackRef[] = [];
  readonly ended: RequestRecord[] = [];
  /** Set to a Slack error code to make every later post fail for good. */
  refuseWith: string | undefined;
  postWith: (record: RequestRecord, options: PostOptions) => Promise<SlackRef | undefined> = async (record) => ({
    channel: record.channel,
    ts: `1700000000.${String(100 + this.posts.length).padStart(6, "0")}`,
  });
  showEndedWith: (record: RequestRecord) => Promise<void> = async () => {};
  /** Every reminder and escalation the service sent, in order. */
  readonly reminders: Array<{ record: RequestRecord; entry: ScheduleEntry; now: number }> = [];
  remindWith: (record: RequestRecord, entry: ScheduleEntry) => Promise<void> = async () => {};
  /** Every outcome notice part sent, in order (a part whose `tellOutcomeWith` threw is not listed). */
  readonly notices: Array<{ record: RequestRecord; part: NoticePart; now: number }> = [];
  tellOutcomeWith: (record: RequestRecord, part: NoticePart) => Promise<void> = async () => {};
  /** Every rule tally posted or rewritten, in order, with the rule as it was shown. */
  readonly tallies: Array<{ action: "post" | "update"; rule: Rule }> = [];
  tallyWith: (rule: Rule) => Promise<void> = async () => {};

  async post(record: RequestRecord, options: PostOptions = {}): Promise<SlackRef | undefined> {
    this.posts.push(record);
    if (this.refuseWith !== undefined) throw new PermanentDeliveryError(this.refuseWith);
    const ref = await this.postWith(record, options);
    if (ref !== undefined) this.refs.push(ref);
    return ref;
  }

  async showEnded(record: RequestRecord): Promise<void> {
    this.ended.push(record);
    return this.showEndedWith(record);
  }

  async remind(record: RequestRecord, entry: ScheduleEntry, now: number): Promise<void> {
    await this.remindWith(record, entry);
    this.reminders.push({ record, entry, now });
  }

  async tellOutcome(record: RequestRecord, part: NoticePart, now: number): Promise<void> {
    await this.tellOutcomeWith(record, part);
    this.notices.push({ record, part, now });
  }

  async postRuleTally(rule: Rule): Promise<string> {
    await this.tallyWith(rule);
    this.tallies.push({ action: "post", rule });
    return `1700000900.${String(this.tallies.length).padStart(6, "0")}`;
  }

  async updateRuleTally(rule: Rule): Promise<void> {
    await this.tallyWith(rule);
    this.tallies.push({ action: "update", rule });
  }
}
