/**
 * The chaos soak (issue 19 item 3): two relay instances on a Redis of the
 * soak's own, Slack on loopback (./slack.ts), agents of several tokens
 * asking all four kinds of question (./agents.ts), people answering with
 * clicks, modals and thread replies (./people.ts), and overlapping faults
 * (./faults.ts) for N minutes; then every request is read back, the history
 * checked (./checker.ts) and the verdict printed. Exit code 1 on any
 * violation, 2 when the soak itself could not run.
 *
 *   npm run soak -- --minutes 2 [--seed 7] [--results] [--history soak.json] [--logs DIR] [--plant drop-callback] [--timeouts 6-12]
 *
 * --results writes the table into bench/RESULTS.md; --logs keeps each
 * relay's log (at debug) in DIR; --plant drop-callback
 * hides the first callback the receiver gets (a relay that lost it), which
 * the checker must catch; --timeouts MIN-MAX draws every question's timeout
 * from MIN–MAX seconds (by default 15–40, hook calls 20–40), so a short run
 * is not followed by 40 s of waiting for its last questions to end.
 */
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { setTimeout as sleep } from "node:timers/promises";
import { verifyCallbackSignature } from "../../src/client/index.js";
import { MIN_HOOK_TIMEOUT_SECONDS } from "../../src/protocol/claude-code-hook.js";
import { startReceiver, type Hit } from "../../test/helpers/receiver.js";
import { agentLoop, DEFAULT_TIMEOUTS, type AgentToken, type Timeouts } from "./agents.js";
import { check } from "./checker.js";
import { runFaults } from "./faults.js";
import type { AgentOutcome, CallbackDelivery, Click, SoakHistory, SoakRequest } from "./history.js";
import { printReport, recordSoak } from "./report.js";
import { SOAK_BOT_TOKEN, startSoakSlack } from "./slack.js";
import { startWorld, tail } from "./world.js";

const ROOT = resolve(import.meta.dirname, "../..");
const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "2" },
    seed: { type: "string" },
    results: { type: "boolean", default: false },
    history: { type: "string" },
    logs: { type: "string" },
    plant: { type: "string" },
    timeouts: { type: "string" },
  },
});
const minutes = Number(values.minutes);
if (!(minutes > 0)) throw new Error(`--minutes must be a positive number, got ${values.minutes}`);
if (values.plant !== undefined && values.plant !== "drop-callback") throw new Error(`--plant knows only drop-callback, got ${values.plant}`);
const timeouts = values.timeouts === undefined ? DEFAULT_TIMEOUTS : timeoutsOf(values.timeouts);
const seed = Number(values.seed ?? Math.floor(Math.random() * 2 ** 31));
const random = mulberry32(seed);
/** A request may end this long after its deadline: the expiry sweep runs every 250 ms, and a loaded 2-core machine adds its own delays. */
const GRACE_MS = 3000;
const log = (line: string) => process.stderr.write(`[soak ${new Date().toISOString().slice(11, 19)}] ${line}\n`);

const built = spawnSync(process.execPath, ["--import", "./scripts/ensure-build.mjs", "-e", ""], { cwd: ROOT, stdio: "inherit" });
if (built.status !== 0) throw new Error("the build failed");

const slack = await startSoakSlack();
const tokens: AgentToken[] = Array.from({ length: 4 }, (_, i) => ({
  name: `agent-${i + 1}`,
  token: `tok_soak_${i + 1}_${randomBytes(12).toString("hex")}`,
  channel: `C0SOAK000${i + 1}`,
}));
const admin = `tok_soak_admin_${randomBytes(12).toString("hex")}`;
const secret = randomBytes(16).toString("hex");
const world = await startWorld({
  root: ROOT,
  idleMs: 5000,
  random,
  ...(values.logs === undefined ? {} : { logDir: values.logs }),
  env: {
    SLACK_BOT_TOKEN: SOAK_BOT_TOKEN,
    SLACK_SIGNING_SECRET: secret,
    SLACK_API_URL: slack.apiUrl,
    SLACK_DEFAULT_CHANNEL: "C0SOAK0000",
    RELAY_TOKENS: tokens.map((t) => `${t.name}:${t.token}`).join(","),
    RELAY_ADMIN_TOKENS: `soak-admin:${admin}`,
    RELAY_SHUTDOWN_GRACE: "5",
    RELAY_HOOK_KEEPALIVE: "2",
    LOG_LEVEL: values.logs === undefined ? "error" : "debug",
  },
});
log(`seed ${seed}; relays on ${world.instances.map((i) => i.port).join(", ")}, Redis ${world.redisUrl}, Slack ${slack.apiUrl}`);

const requests: SoakRequest[] = [];
const clicks: Click[] = [];
const waiters = new Map<string, (outcome: AgentOutcome | undefined) => void>();
let dropped: string | undefined;
const receiver = await startReceiver();
const hits: Hit[] = [];
const onHit = () => {
  for (const hit of receiver.hits.splice(0)) {
    const id = String(hit.headers["x-relay-request-id"] ?? "");
    if (values.plant === "drop-callback" && (dropped ?? id) === id) {
      dropped = id;
      // Its agent hears nothing, now as at the end of the wait: no need to wait a minute past its deadline.
      waiters.get(id)?.(undefined);
      waiters.delete(id);
      continue;
    }
    hits.push(hit);
    const view = JSON.parse(hit.body) as { status: AgentOutcome["status"]; decision?: unknown };
    waiters.get(id)?.({ at: hit.at, status: view.status, ...(view.decision === undefined ? {} : { decision: view.decision }) });
    waiters.delete(id);
  }
};
const hitTimer = setInterval(onHit, 50);

const startedAt = Date.now();
const stopAt = startedAt + minutes * 60_000;
const deps = {
  route: world.route,
  requests,
  callbackUrl: `${receiver.url}/callback`,
  random,
  timeouts,
  people: {
    secret,
    slack,
    clicks,
    silenceMs: 8000,
    problems: [] as string[],
    pickInstance: () => world.route(false),
  },
  delivered(id: string, until: number) {
    onHit();
    const hit = hits.find((h) => h.headers["x-relay-request-id"] === id);
    if (hit) return Promise.resolve(outcomeOf(hit));
    if (dropped === id) return Promise.resolve(undefined);
    return new Promise<AgentOutcome | undefined>((done) => {
      const timer = setTimeout(() => (waiters.delete(id), done(undefined)), Math.max(0, until - Date.now()));
      waiters.set(id, (outcome) => (clearTimeout(timer), done(outcome)));
    });
  },
};

let exitCode = 0;
try {
  const faults = runFaults(world, slack, { startedAt, stopAt, random, log });
  const loops = tokens.flatMap((token) => [0, 1, 2].map((slot) => agentLoop(deps, token, slot === 0, stopAt)));
  const progress = setInterval(() => log(`${requests.length} requests, ${clicks.length} clicks, ${requests.filter((r) => r.agent).length} ended`), 30_000);
  await Promise.all([faults, ...loops]);
  clearInterval(progress);
  log(`traffic over: ${requests.length} requests; settling`);
  await settle();
  const endedAt = Date.now();
  await readFinalStates();
  const history: SoakHistory = {
    startedAt,
    endedAt,
    graceMs: GRACE_MS,
    requests,
    clicks,
    notices: slack.notices,
    opens: slack.opens.map(({ triggerId, at }) => ({ triggerId, at })),
    messages: slack.lives,
    callbacks: hits.map(delivery),
    samples: world.samples,
    faults: world.faults,
  };
  const violations = check(history);
  const historyFile = values.history ?? (violations.length > 0 ? join(tmpdir(), `soak-history-${seed}.json`) : undefined);
  if (historyFile) {
    writeFileSync(historyFile, JSON.stringify(history));
    log(`history written to ${historyFile}`);
  }
  const report = printReport(history, violations, { minutes, seed, slackRefused: slack.refused });
  console.log(report);
  if (values.results) await recordSoak(resolve(ROOT, "bench/RESULTS.md"), report, { minutes, seed, violations: violations.length });
  exitCode = violations.length === 0 ? 0 : 1;
  if (deps.people.problems.length > 0) {
    log(`the soak's own side went wrong, so the run proves nothing:\n${deps.people.problems.slice(0, 10).join("\n")}`);
    exitCode = 2;
  }
  if (exitCode !== 0) for (const instance of world.instances) log(`relay ${instance.name} last lines:\n${tail(instance)}`);
} catch (error) {
  log(`the soak could not run: ${(error as Error).stack ?? String(error)}`);
  for (const instance of world.instances) log(`relay ${instance.name} last lines:\n${tail(instance)}`);
  exitCode = 2;
} finally {
  clearInterval(hitTimer);
  await world.stop();
  await slack.close();
  await receiver.close();
}
process.exit(exitCode);

/** Waits (bounded) until every ended request's messages are updated and every callback has arrived. */
async function settle(): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    onHit();
    const open = requests.filter(
      (r) =>
        r.id &&
        ((r.agent && r.agent.status !== "lost" && !slack.messageEnded(r.id)) ||
          (r.via === "callback" && !hits.some((h) => h.headers["x-relay-request-id"] === r.id))),
    );
    if (open.length === 0 || (values.plant && open.length === 1)) return;
    await sleep(250);
  }
}

/** GET every request with its own token; then every request still pending, as an admin sees them. */
async function readFinalStates(): Promise<void> {
  const base = world.route(false) ?? new URL(`http://127.0.0.1:${world.instances[0]!.port}`);
  const tokenOf = new Map(tokens.map((t) => [t.name, t.token]));
  for (const request of requests) {
    if (!request.id) continue;
    const reply = await fetch(new URL(`/v1/requests/${request.id}`, base), { headers: { authorization: `Bearer ${tokenOf.get(request.token)}` } });
    if (!reply.ok) throw new Error(`GET /v1/requests/${request.id}: HTTP ${reply.status}`);
    const view = (await reply.json()) as { status: "pending"; decision?: unknown; answeredBy?: { id: string }; answeredAt?: string };
    request.final = {
      status: view.status,
      ...(view.decision === undefined ? {} : { decision: view.decision }),
      ...(view.answeredBy ? { answeredBy: view.answeredBy.id } : {}),
      ...(view.answeredAt ? { answeredAt: Date.parse(view.answeredAt) } : {}),
    };
  }
  const pending = await fetch(new URL("/v1/requests?status=pending&limit=1000", base), { headers: { authorization: `Bearer ${admin}` } });
  const { requests: still } = (await pending.json()) as { requests: Array<{ id: string; kind: SoakRequest["kind"]; expiresAt: string }> };
  for (const view of still) {
    if (requests.some((r) => r.id === view.id)) continue;
    requests.push({
      marker: view.id,
      id: view.id,
      kind: view.kind,
      via: "hook",
      token: "?",
      createdAt: 0,
      deadline: Date.parse(view.expiresAt),
      final: { status: "pending" },
    });
  }
}

function outcomeOf(hit: Hit): AgentOutcome {
  const view = JSON.parse(hit.body) as { status: AgentOutcome["status"]; decision?: unknown };
  return { at: hit.at, status: view.status, ...(view.decision === undefined ? {} : { decision: view.decision }) };
}

function delivery(hit: Hit): CallbackDelivery {
  const id = String(hit.headers["x-relay-request-id"] ?? "");
  const request = requests.find((r) => r.id === id);
  const token = tokens.find((t) => t.name === request?.token)?.token ?? "";
  const signatureOk = verifyCallbackSignature({
    token,
    timestamp: String(hit.headers["x-relay-timestamp"] ?? ""),
    body: hit.body,
    signature: String(hit.headers["x-relay-signature"] ?? ""),
    now: hit.at,
  });
  const view = JSON.parse(hit.body) as { status: string; decision?: unknown };
  return { requestId: id, at: hit.at, signatureOk, status: view.status, ...(view.decision === undefined ? {} : { decision: view.decision }) };
}

/** `6-12`: questions time out after 6 to 12 s, hook calls as well. */
function timeoutsOf(text: string): Timeouts {
  const match = /^(\d+)-(\d+)$/.exec(text);
  const min = Number(match?.[1]);
  const max = Number(match?.[2]);
  if (!match || min < MIN_HOOK_TIMEOUT_SECONDS || max < min) {
    throw new Error(`--timeouts must be MIN-MAX whole seconds, ${MIN_HOOK_TIMEOUT_SECONDS} or more (a hook call's least), got ${text}`);
  }
  return { request: { min, max }, hook: { min, max } };
}

/** A small seeded generator, so a run can be repeated with --seed. */
function mulberry32(state: number): () => number {
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
