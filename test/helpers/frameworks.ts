/**
 * What the framework adapter tests share (test/integration/frameworks): the
 * relay's real agent API (startApiRelay) with a client that waits briefly,
 * and answering the next request that reaches the store as a person would.
 */
import { afterEach, beforeEach } from "vitest";
import { RelayClient } from "../../src/client/index.js";
import type { Decision } from "../../src/protocol/decisions.js";
import type { RequestRecord } from "../../src/requests/model.js";
import { ALICE } from "../fixtures/people.js";
import { startApiRelay, type ApiRelay } from "./api-relay.js";
import { until } from "./until.js";

export interface FrameworkRelay {
  relay: ApiRelay;
  client: RelayClient;
  /** Waits for the request number `index` (0-based; default: the next one) to reach the store, then answers it as alice. */
  answer(decision: Decision, index?: number): Promise<RequestRecord>;
  /** Waits for a request that `matches` and was not answered here yet, then answers it as alice. */
  answerWhere(matches: (record: RequestRecord) => boolean, decision: Decision): Promise<RequestRecord>;
  /** Slack messages posted so far (after the relay's work settled). */
  posts(): Promise<number>;
}

/** A fresh relay and client for each test of the file. */
export function useFrameworkRelay(): FrameworkRelay {
  const self = { answered: 0, handled: new Set<string>() } as FrameworkRelay & { answered: number; handled: Set<string> };
  beforeEach(async () => {
    self.relay = await startApiRelay();
    self.client = new RelayClient({ url: self.relay.url, token: self.relay.tokens[0]!.token, maxWaitSeconds: 5, initialRetryDelayMs: 20, retries: 1 });
    self.answered = 0;
    self.handled.clear();
  });
  afterEach(async () => {
    await self.relay.close();
  });
  self.answer = async (decision, index) => {
    const at = index ?? self.answered;
    await until(() => self.relay.stored.length > at);
    const record = self.relay.stored[at]!;
    await self.relay.service.answer(record.id, decision, ALICE);
    self.answered = Math.max(self.answered, at + 1);
    self.handled.add(record.id);
    return record;
  };
  self.answerWhere = async (matches, decision) => {
    const find = () => self.relay.stored.find((r) => matches(r) && !self.handled.has(r.id));
    await until(() => find() !== undefined);
    const record = find()!;
    self.handled.add(record.id);
    await self.relay.service.answer(record.id, decision, ALICE);
    return record;
  };
  self.posts = async () => {
    await self.relay.service.idle();
    return self.relay.messenger.posts.length;
  };
  return self;
}
