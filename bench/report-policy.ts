/**
 * The report's table for the policy scenario (bench/policy.ts): click →
 * agent with a route's approver policy against the same relay without a
 * config file, per store, and whether what the policy adds stays under
 * issue 8's target.
 */
import type { StoreResults, Table } from "./report.js";
import { mark, ms, ratio } from "./stats.js";

/** Most a route lookup and an approver check may add to click → agent (issue 8), ms. */
export const POLICY_ADDED_MS = 0.5;

/** The policy scenario's tables: click → agent with and without the policy, and the same work in the bench's process. */
export function policyTables(results: StoreResults[]): Table[] {
  return [clickTable(results), inProcessTable(results)];
}

/** Click → agent with the route policy against without a config file; "added" is the median over rounds of the difference. */
function clickTable(results: StoreResults[]): Table {
  const first = results[0]!.policy!;
  const n = first.median.policy.n;
  return {
    title: `Route lookup and approver check: click → agent, ms, with a route naming approvers {users: [another id], usergroups: [a group the clicker is in]} vs no config file (${n} + ${n} interleaved × ${first.rounds.length} rounds; median round; added = median over rounds of with − without)`,
    header: [
      "store",
      "p50 without / with",
      "p90 without / with",
      "p99 without / with",
      "added p50",
      "added p90",
      "added p99",
      "ratio p50 / p99",
      "added to create p50",
      "clicks answered (without / with)",
      "group lookups",
      `target added < ${POLICY_ADDED_MS} (p50, p99)`,
    ],
    rows: results.map(({ store, policy: p }) => {
      const m = p!.median;
      const pair = (plain: number, withPolicy: number) => `${ms(plain)} / ${ms(withPolicy)}`;
      return [
        store,
        pair(m.plain.p50, m.policy.p50),
        pair(m.plain.p90, m.policy.p90),
        pair(m.plain.p99, m.policy.p99),
        signed(p!.added.p50),
        signed(p!.added.p90),
        signed(p!.added.p99),
        `${ratio(p!.ratio.p50)} / ${ratio(p!.ratio.p99)}`,
        signed(p!.added.createP50),
        `${p!.answered.plain} / ${p!.answered.policy}`,
        String(p!.groupLookups),
        `${mark(p!.added.p50 < POLICY_ADDED_MS)} ${mark(p!.added.p99 < POLICY_ADDED_MS)}`,
      ];
    }),
  };
}

/** µs per call timed in the bench's process: the floor under the click → agent difference. */
function inProcessTable(results: StoreResults[]): Table {
  const micro = (value: number) => value.toFixed(2);
  return {
    title: "Route lookup and approver check in the bench's own process, µs per call (median of 5 rounds of 20,000 calls; measured before each store's run)",
    header: ["run", "route lookup + policy at create, with / without", "approver check on a click, with / without", "added to a click, µs"],
    rows: results.map(({ store, policy: p }) => {
      const { routeLookup, approverCheck } = p!.inProcess;
      return [
        store,
        `${micro(routeLookup.policy)} / ${micro(routeLookup.plain)}`,
        `${micro(approverCheck.policy)} / ${micro(approverCheck.plain)}`,
        micro(approverCheck.policy - approverCheck.plain),
      ];
    }),
  };
}

/** A difference in ms with its sign and three decimals (these are fractions of a millisecond). */
function signed(value: number): string {
  return Number.isFinite(value) ? `${value >= 0 ? "+" : "−"}${Math.abs(value).toFixed(3)}` : "–";
}
