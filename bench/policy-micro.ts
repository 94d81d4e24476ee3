/**
 * The policy's own work timed in the bench's process, with no HTTP, store or
 * second process around it: the floor under the click → agent difference the
 * policy scenario measures (bench/policy.ts), which on a shared machine is
 * mostly noise. Each is timed with the relay's config read from the same
 * RELAY_CONFIG_FILE and against the same calls without one:
 *   - route lookup, at create: matchRoute and createPolicy (requests/routes.ts,
 *     requests/create-policy.ts) for a bench request;
 *   - approver check, on every click: refusalFor (requests/policy.ts) for the
 *     clicking person of the relay's own workspace, who is not listed but in
 *     the group, its members served from a SlackPeopleDirectory's warm cache.
 */
import { loadConfig } from "../src/config/config.js";
import { CreateRequestBody } from "../src/protocol/request-body.js";
import { createPolicy } from "../src/requests/create-policy.js";
import type { RequestRecord } from "../src/requests/model.js";
import { refusalFor } from "../src/requests/policy.js";
import { matchRoute } from "../src/requests/routes.js";
import { SlackPeopleDirectory } from "../src/slack/directory.js";
import { newMarker, requestBody } from "./agent.js";
import { BENCH_CLICKER } from "./slack-click.js";
import { BENCH_TEAM_ID } from "./slack-stand-in.js";
import { median } from "./stats.js";

/** Microseconds per call, with the config file and without (median of rounds). */
export interface InProcessCost {
  routeLookup: { policy: number; plain: number };
  approverCheck: { policy: number; plain: number };
}

const CALLS = 20_000;
const ROUNDS = 5;

export async function inProcessCost(configFile: string, usergroups: Record<string, string[]>): Promise<InProcessCost> {
  const directory = new SlackPeopleDirectory({
    client: {
      usergroups: { users: { list: ({ usergroup }) => Promise.resolve({ ok: true, users: usergroups[usergroup] ?? [] }) } },
      users: { lookupByEmail: () => Promise.reject(new Error("not asked")) },
      auth: { test: () => Promise.resolve({ ok: true, team_id: BENCH_TEAM_ID }) },
    },
    logger: { warn: () => undefined },
    homeTeamId: BENCH_TEAM_ID,
  });
  const body = CreateRequestBody.parse(requestBody("step_gate", newMarker()));
  const answerer = { ...BENCH_CLICKER, teamId: BENCH_TEAM_ID };
  const variants = await Promise.all(
    [configFile, undefined].map(async (file) => {
      const config = loadConfig({
        SLACK_BOT_TOKEN: "xoxb-bench",
        SLACK_SIGNING_SECRET: "be4c5e0000000000000000000000be4c",
        RELAY_TOKENS: "bench:bench-token-000000000000",
        RELAY_CONFIG_FILE: file,
      });
      const defaults = { alwaysAllow: config.alwaysAllow, ...config.defaultPolicy };
      const lookUp = () => createPolicy({ body, matched: matchRoute(config.routes, { tokenName: "bench", body }), defaults, directory });
      const now = Date.now();
      const record: RequestRecord = {
        id: "bench",
        status: "pending",
        tokenName: "bench",
        channel: "C0BENCH0001",
        body,
        createdAt: now,
        expiresAt: now + 300_000,
        postedAt: now,
        policy: await lookUp(),
      };
      const check = async () => {
        if (await refusalFor(record, answerer, Date.now(), directory)) throw new Error("the bench's clicker would be refused");
      };
      return { lookUp, check };
    }),
  );
  const [policy, plain] = variants as [(typeof variants)[0], (typeof variants)[0]];
  return {
    routeLookup: { policy: await microseconds(policy.lookUp), plain: await microseconds(plain.lookUp) },
    approverCheck: { policy: await microseconds(policy.check), plain: await microseconds(plain.check) },
  };
}

/** Median over rounds of the mean µs per call, after a warm-up round. */
async function microseconds(call: () => Promise<unknown>): Promise<number> {
  const rounds: number[] = [];
  for (let round = 0; round <= ROUNDS; round += 1) {
    const started = performance.now();
    for (let i = 0; i < CALLS; i += 1) await call();
    if (round > 0) rounds.push(((performance.now() - started) * 1000) / CALLS);
  }
  return median(rounds);
}
