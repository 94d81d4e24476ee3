/**
 * What a route's approver policy costs a click (issue 8, docs/architecture.md §7): click →
 * agent on two relays side by side, one started with a RELAY_CONFIG_FILE
 * whose route the bench's requests match and which names the approvers
 * (a user by id who is not the clicker, and a user group the clicker is in,
 * so every click is checked against the group's members, served from the
 * SlackPeopleDirectory's cache after the first lookup), the other with no
 * config file. Cycles alternate between the two (and which goes first), so
 * the shared machine's noise hits both alike; the figure is the difference.
 *
 * Before measuring, the policy must be seen to hold: a click by someone who
 * is neither listed nor in the group is refused, and a member's click on the
 * same request answers it. Every measured click must be answered (a refused
 * one fails the run at once), and the group must have been asked of Slack.
 * The route lookup itself runs at create, so create times are kept too.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assertAnsweredYes, beforeReply, freshChannel, newMarker, requestBody, YES_ACTION, type RequestView } from "./agent.js";
import { expectJson } from "./http.js";
import { inProcessCost, type InProcessCost } from "./policy-micro.js";
import { answeredCycle, unlessTold, type CycleTimes } from "./latency.js";
import { BENCH_CLICKER, type Clicker } from "./slack-click.js";
import { median, medianRound, summarize, type LatencySummary } from "./stats.js";
import { withTarget, type Target, type TargetOptions } from "./target.js";
import { BOB, CAROL, MALLORY } from "../test/fixtures/people.js";

export interface PolicyOptions {
  /** Cycles per relay per round. */
  n: number;
  /** Unmeasured cycles per relay before the first round. */
  warmup: number;
  rounds: number;
}

/** The approvers' user group; the clicking person is one of its members. */
export const APPROVER_GROUP = "S0BENCHAPPR";
/** The one user the route lists by id: not the clicker, so the check has to look the group up. */
export const LISTED_APPROVER = CAROL.id;
/** Neither listed nor in the group. */
const OUTSIDER: Clicker = MALLORY;

/** Routes as an operator would write them: two the bench's requests do not match, then the one they do. */
export const POLICY_CONFIG = `routes:
  - match: { agent: nightly-report, kind: ask_user_question }
    approvers: any
  - match: { token: deploy-bot, kind: [permission, step_gate], tool: "Bash|mcp__k8s__.*", labels: { env: prod } }
    approvers: { users: [U0ALICE01], usergroups: [S0SRE00001] }
  - match: { token: bench, kind: step_gate, tool: Bash, agent: bench }
    approvers: { users: [${LISTED_APPROVER}], usergroups: [${APPROVER_GROUP}] }
`;

export interface PolicyRound {
  /** Click → agent, ms. */
  policy: LatencySummary;
  plain: LatencySummary;
  /** POST /v1/requests → 201, ms (the route is looked up there). */
  createPolicy: LatencySummary;
  createPlain: LatencySummary;
}

export interface PolicyResult {
  rounds: PolicyRound[];
  /** The round with the median p50 difference. */
  median: PolicyRound;
  /** Median over rounds of (with policy − without), ms. */
  added: { p50: number; p90: number; p99: number; createP50: number };
  /** Median over rounds of with policy / without. */
  ratio: { p50: number; p99: number };
  /** Clicks answered yes, per relay, warm-up included: every click sent. */
  answered: { policy: number; plain: number };
  /** usergroups.users.list calls the policy relay made (the rest were served from its cache). */
  groupLookups: number;
  /** The same work timed in the bench's own process. */
  inProcess: InProcessCost;
}

/** Starts both relays (one with the config file), measures, and tears everything down. */
export async function runPolicy(target: TargetOptions, options: PolicyOptions, progress: (line: string) => void): Promise<PolicyResult> {
  const dir = mkdtempSync(join(tmpdir(), "relay-bench-policy-"));
  const file = join(dir, "relay.config.yaml");
  writeFileSync(file, POLICY_CONFIG);
  const usergroups = { [APPROVER_GROUP]: [BOB.id, BENCH_CLICKER.id] };
  const standIn = { ...target.standIn, usergroups };
  try {
    const inProcess = await inProcessCost(file, usergroups);
    progress(
      `in process: route lookup ${inProcess.routeLookup.policy.toFixed(2)} / ${inProcess.routeLookup.plain.toFixed(2)} µs, approver check ${inProcess.approverCheck.policy.toFixed(2)} / ${inProcess.approverCheck.plain.toFixed(2)} µs (with / without)`,
    );
    const measured = await withTarget({ ...variant(target, "plain"), standIn }, async (plain) => {
      progress(`without policy: relay pid ${plain.relay.pid}`);
      return withTarget({ ...variant(target, "policy"), standIn, env: { ...target.env, RELAY_CONFIG_FILE: file } }, async (policy) => {
        progress(`with policy: relay pid ${policy.relay.pid}`);
        return measure(plain, policy, options, progress);
      });
    });
    return { ...measured, inProcess };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Each relay keeps its own Redis keys (under the run's prefix) and its own CPU profile. */
function variant(target: TargetOptions, name: string): TargetOptions {
  const nodeFlags = (target.nodeFlags ?? []).map((flag) => (flag.startsWith("--cpu-prof-name=") ? flag.replace(/\.cpuprofile$/, `-${name}.cpuprofile`) : flag));
  return { ...target, redisPrefix: `${target.redisPrefix}:${name}`, nodeFlags };
}

async function measure(plain: Target, policy: Target, options: PolicyOptions, progress: (line: string) => void): Promise<Omit<PolicyResult, "inProcess">> {
  await checkPolicyHolds(policy);
  const answered = { policy: 0, plain: 0 };
  const cycle = async (name: "policy" | "plain"): Promise<CycleTimes> => {
    const times = await answeredCycle((name === "policy" ? policy : plain).agent, "step_gate");
    answered[name] += 1;
    return times;
  };
  /** One cycle on each relay, the first one alternating. */
  const pair = async (i: number): Promise<Record<"policy" | "plain", CycleTimes>> => {
    if (i % 2 === 0) {
      const first = await cycle("plain");
      return { plain: first, policy: await cycle("policy") };
    }
    const first = await cycle("policy");
    return { policy: first, plain: await cycle("plain") };
  };
  for (let i = 0; i < options.warmup; i += 1) await pair(i);
  const rounds: PolicyRound[] = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const samples = { policy: [] as CycleTimes[], plain: [] as CycleTimes[] };
    for (let i = 0; i < options.n; i += 1) {
      const times = await pair(i);
      samples.policy.push(times.policy);
      samples.plain.push(times.plain);
    }
    const result: PolicyRound = {
      policy: summarize(samples.policy.map((t) => t.clickMs)),
      plain: summarize(samples.plain.map((t) => t.clickMs)),
      createPolicy: summarize(samples.policy.map((t) => t.createMs)),
      createPlain: summarize(samples.plain.map((t) => t.createMs)),
    };
    rounds.push(result);
    progress(
      `round ${round}: p50 ${result.policy.p50.toFixed(3)} with / ${result.plain.p50.toFixed(3)} without, p99 ${result.policy.p99.toFixed(2)} / ${result.plain.p99.toFixed(2)} ms`,
    );
  }
  const groupLookups = checkLookups(plain, policy);
  const added = (key: (r: PolicyRound) => number) => median(rounds.map(key));
  return {
    rounds,
    median: medianRound(rounds, (r) => r.policy.p50 - r.plain.p50),
    added: {
      p50: added((r) => r.policy.p50 - r.plain.p50),
      p90: added((r) => r.policy.p90 - r.plain.p90),
      p99: added((r) => r.policy.p99 - r.plain.p99),
      createP50: added((r) => r.createPolicy.p50 - r.createPlain.p50),
    },
    ratio: { p50: added((r) => r.policy.p50 / r.plain.p50), p99: added((r) => r.policy.p99 / r.plain.p99) },
    answered,
    groupLookups,
  };
}

/** An outsider's Yes is refused and leaves the request pending; then the member's Yes answers it. Throws otherwise. */
async function checkPolicyHolds({ agent, standIn }: Target): Promise<void> {
  const marker = newMarker();
  const id = await agent.create(requestBody("step_gate", marker, 300, freshChannel()));
  const poll = agent.longPoll(id, 30);
  poll.catch(() => undefined);
  const message = await beforeReply(agent.messageReady(marker), poll, "GET /v1/requests/:id?wait=30");
  const told = standIn.nextNotice();
  await agent.click(agent.prepareClick(message, YES_ACTION.step_gate, OUTSIDER));
  const notice = await Promise.race([told.notice, deadline(5000, "the policy relay did not tell an outsider their click was refused")]);
  if (notice.user !== OUTSIDER.id) throw new Error(`the relay told ${notice.user}, not the outsider ${OUTSIDER.id}: ${notice.text}`);
  const after = await agent.get(id);
  if (after.status !== "pending") throw new Error(`an outsider's click ended request ${id} (${after.status}): the route's approvers were not applied`);
  const clicked = agent.click(agent.prepareClick(message, YES_ACTION.step_gate));
  const reply = await unlessTold(standIn, poll, id);
  await clicked;
  assertAnsweredYes("step_gate", expectJson<RequestView>(reply, 200, "GET /v1/requests/:id?wait=30"));
}

/** The policy relay asked Slack for the group (and only it did); no click but the outsider's got a notice. Returns its lookups. */
function checkLookups(plain: Target, policy: Target): number {
  const lookups = policy.standIn.calls.get("usergroups.users.list") ?? 0;
  if (lookups === 0) throw new Error("the policy relay never asked Slack for the group's members: the approver check did not run");
  const plainLookups = plain.standIn.calls.get("usergroups.users.list") ?? 0;
  if (plainLookups > 0) throw new Error(`the relay without a config file asked for user groups ${plainLookups} times`);
  const notices = [...plain.standIn.notices, ...policy.standIn.notices.slice(1)];
  if (notices.length > 0) throw new Error(`${notices.length} clicks were not taken, e.g.: ${notices[0]!.text}`);
  return lookups;
}

function deadline(ms: number, what: string): Promise<never> {
  return new Promise((_, reject) => setTimeout(() => reject(new Error(what)), ms).unref());
}
