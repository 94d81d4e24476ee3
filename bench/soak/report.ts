/**
 * The soak's printed verdict, as markdown (it also goes into
 * bench/RESULTS.md with --results): what was asked and how it ended, what
 * people did, which faults ran, how late the latest request ended against
 * its deadline, each long-lived relay process's memory and descriptors
 * early and late, and every violation, by rule.
 */
import { cpus, loadavg } from "node:os";
import { recordResults } from "../results-file.js";
import { growth, type Violation } from "./checker.js";
import type { SoakHistory } from "./history.js";

export interface RunFacts {
  minutes: number;
  seed: number;
  slackRefused: number;
}

const MB = 2 ** 20;

export function printReport(history: SoakHistory, violations: Violation[], facts: RunFacts): string {
  const lines: string[] = [];
  const count = <T>(items: T[], key: (item: T) => string) => {
    const counts = new Map<string, number>();
    for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
    return [...counts].sort(([a], [b]) => a.localeCompare(b));
  };
  lines.push(`| requests (kind, how the agent hears) | ${["answered", "expired", "cancelled", "denied", "refused", "lost", "other"].join(" | ")} |`);
  lines.push(`| --- | ${Array(7).fill("---:").join(" | ")} |`);
  for (const [group, n] of count(history.requests, (r) => `${r.kind}, ${r.via}`)) {
    const of = history.requests.filter((r) => `${r.kind}, ${r.via}` === group);
    const status = (s: string) => of.filter((r) => (r.agent?.status ?? "other") === s).length;
    const known = ["answered", "expired", "cancelled", "denied", "refused", "lost"];
    lines.push(`| ${group} (${n}) | ${[...known.map(status), of.filter((r) => !known.includes(r.agent?.status ?? "other")).length].join(" | ")} |`);
  }
  const late = history.requests.flatMap((r) => (r.agent && r.agent.status !== "answered" && r.agent.status !== "lost" ? [r.agent.at - r.deadline] : []));
  const clicks = count(history.clicks, (c) => c.how)
    .map(([how, n]) => `${n} ${how}`)
    .join(", ");
  const faults = count(history.faults, (f) => f.kind)
    .map(([kind, n]) => `${n} × ${kind}`)
    .join(", ");
  lines.push("");
  lines.push(`- people: ${clicks}; ${history.notices.length} ephemeral notices (${history.notices.filter((n) => n.refused).length} refused by Slack faults)`);
  lines.push(`- faults: ${faults}; idle proxies cutting after 5 s throughout; ${facts.slackRefused} Slack calls refused`);
  lines.push(`- unanswered requests ended at most ${Math.max(0, ...late)} ms after their deadline (grace ${history.graceMs} ms)`);
  lines.push(`- callbacks received: ${history.callbacks.length} for ${history.requests.filter((r) => r.via === "callback").length} callback requests`);
  const lives = growth(history);
  if (lives.length === 0) lines.push("- memory and descriptors: no relay process lived long enough to judge growth");
  for (const life of lives) {
    lines.push(
      `- relay ${life.life} (${life.minutes.toFixed(1)} min): fds ${life.early.fds} → ${life.late.fds}, heap ${(life.early.heapUsedBytes / MB).toFixed(1)} → ${(life.late.heapUsedBytes / MB).toFixed(1)} MB, RSS ${(life.early.rssBytes / MB).toFixed(0)} → ${(life.late.rssBytes / MB).toFixed(0)} MB (medians, first and last quarter)`,
    );
  }
  lines.push(
    `- violations: ${
      violations.length === 0
        ? "none"
        : count(violations, (v) => v.rule)
            .map(([rule, n]) => `${n} ${rule}`)
            .join(", ")
    }`,
  );
  for (const violation of violations.slice(0, 40)) lines.push(`  - ${violation.rule} ${violation.subject}: ${violation.detail}`);
  if (violations.length > 40) lines.push(`  - … and ${violations.length - 40} more`);
  const header = `Chaos soak, ${facts.minutes} min, seed ${facts.seed}: ${history.requests.length} requests, ${history.clicks.length} clicks, ${history.faults.length} faults — ${violations.length === 0 ? "no violation" : `${violations.length} violations`}`;
  return [header, "", ...lines].join("\n");
}

/** Adds the run to bench/RESULTS.md's "## soak" section. */
export async function recordSoak(path: string, report: string, { minutes, seed }: { minutes: number; seed: number; violations: number }): Promise<void> {
  const body = report.split("\n").slice(2).join("\n");
  await recordResults(path, {
    heading: `${new Date().toISOString().slice(0, 10)} — ${minutes} minutes, Node ${process.versions.node}`,
    facts: [
      `command: \`npm run soak -- --minutes ${minutes} --seed ${seed} --results\``,
      `machine: ${cpus().length} CPUs, load average ${loadavg()[0]!.toFixed(1)} at the end`,
    ],
    tables: new Map([["soak", body]]),
  });
}
