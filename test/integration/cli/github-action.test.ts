/**
 * The GitHub Action (action.yml): its step's script, scripts/github-action.mjs,
 * run as the runner runs it — GitHub's environment variables, INPUT_*
 * variables as action.yml maps them, a GITHUB_OUTPUT file — driving the real
 * `approval-relay ask` against the relay stand-in, and against the whole
 * relay for re-runs (attempt N+1 of a job), whose joining rests on the relay's
 * own idempotency: the same key and body join, another body is a 409.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect as baseExpect, it as plainIt } from "vitest";
import { parse } from "yaml";
import { compiledCliEntry, cliTest as it } from "../../helpers/cli.js";
import { TOKEN } from "../../helpers/relay-stand-in.js";
import { until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";
import { AGENT_TOKEN, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { Action } from "../../../src/slack/ids.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const SCRIPT = join(root, "scripts", "github-action.mjs");

const GITHUB = {
  GITHUB_SERVER_URL: "https://github.com",
  GITHUB_REPOSITORY: "acme/shop",
  GITHUB_RUN_ID: "9876543210",
  GITHUB_RUN_ATTEMPT: "2",
  GITHUB_JOB: "deploy",
  GITHUB_ACTION: "gate.ask",
  GITHUB_REF: "refs/heads/main",
  GITHUB_SHA: "0123456789abcdef0123456789abcdef01234567",
  GITHUB_ACTOR: "octocat",
};

interface ActionResult {
  code: number | null;
  stdout: string;
  outputs: Record<string, string>;
  summary: string;
}

interface ActionRun {
  child: ReturnType<typeof spawn>;
  done: Promise<ActionResult>;
  /** What the step and the CLI have written to stderr so far. */
  stderr: () => string;
  /** Kills the step and the CLI at once (SIGKILL to the group), as a lost runner: nothing is cancelled. */
  lose: () => void;
}

interface StartOptions {
  /** The action's default CLI, the checkout's bin/approval-relay.mjs (built by npm ci, as action.yml's first step does). */
  ownCli?: boolean;
  token?: string;
  /** GitHub's variables over GITHUB's. */
  github?: Record<string, string>;
  /** The step's working directory (a runner's workspace). */
  cwd?: string;
}

/** Starts the action's step with these inputs (names as in action.yml). */
function startAction(
  relay: { url: string },
  inputs: Record<string, string>,
  { ownCli = false, token = TOKEN, github = {}, cwd }: StartOptions = {},
): ActionRun {
  const dir = mkdtempSync(join(tmpdir(), "gha-"));
  const outputFile = join(dir, "output");
  const summaryFile = join(dir, "summary");
  writeFileSync(outputFile, "");
  writeFileSync(summaryFile, "");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    ...GITHUB,
    ...github,
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    RELAY_RETRIES: "1",
    ...(ownCli ? {} : { APPROVAL_RELAY_COMMAND: JSON.stringify([process.execPath, compiledCliEntry()]) }),
    INPUT_RELAY_URL: relay.url,
    INPUT_RELAY_TOKEN: token,
    INPUT_FAIL_ON_DENIAL: "true",
    INPUT_REQUESTED_BY: GITHUB.GITHUB_ACTOR,
  };
  for (const [name, value] of Object.entries(inputs)) env[`INPUT_${name.replace(/-/g, "_").toUpperCase()}`] = value;
  // Its own process group, which the CLI it spawns joins: lose() kills both.
  const child = spawn(process.execPath, [SCRIPT], { env, stdio: ["ignore", "pipe", "pipe"], detached: true, ...(cwd ? { cwd } : {}) });
  let stdout = "";
  let stderr = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  const done = new Promise<ActionResult>((resolve) => {
    child.on("close", (code) => {
      const outputs = readOutputs(readFileSync(outputFile, "utf8"));
      const summary = readFileSync(summaryFile, "utf8");
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, outputs, summary });
    });
  });
  return { child, done, stderr: () => stderr, lose: () => process.kill(-child.pid!, "SIGKILL") };
}

/** GITHUB_OUTPUT's `name<<delimiter` blocks. */
function readOutputs(text: string): Record<string, string> {
  const outputs: Record<string, string> = {};
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i += 1) {
    const match = /^([\w-]+)<<(.+)$/.exec(lines[i]!);
    if (!match) continue;
    const end = lines.indexOf(match[2]!, i + 1);
    outputs[match[1]!] = lines.slice(i + 1, end).join("\n");
    i = end;
  }
  return outputs;
}

const ALICE_ANSWER = { answeredBy: ALICE, slack: { channel: "C0123456789", ts: "1700000000.000100" } };

// One at a time: each test spawns two Node processes (the step and the CLI), too many at once for a 2-CPU runner.
describe("the GitHub Action's step", { timeout: 60_000 }, () => {
  it("when the person approves, the step succeeds with the outputs, and the request carries the run's context and key", async ({ relay, expect }) => {
    const next = relay.nextRequest();
    const run = startAction(relay, {
      question: "Deploy 0123456 to production?",
      title: "Release",
      context: "*Changes:* fixes the login bug",
      labels: "env=prod\nteam=shop",
      approvers: "U0ALICE01, S0OPS0001",
      "timeout-minutes": "30",
      "requested-by": "U0OCTO001",
    });
    const request = await next;
    relay.end(request.id, { status: "answered", decision: { answers: { answer: true } }, ...ALICE_ANSWER });
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.outputs).toEqual({
      decision: "approved",
      "answered-by": "alice",
      "request-id": request.id,
      "message-url": "https://slack.com/archives/C0123456789/p1700000000000100",
    });
    expect(result.summary).toBe("**Deploy 0123456 to production?**: approved by alice\n");
    expect(request.body).toMatchObject({
      kind: "interactive_questions",
      questions: [{ id: "answer", question: "Deploy 0123456 to production?", type: "confirm" }],
      title: "Release",
      timeoutSeconds: 1800,
      labels: { env: "prod", team: "shop" },
      approvers: { users: [ALICE.id], usergroups: ["S0OPS0001"] },
      requestedBy: { slackUserId: "U0OCTO001" },
      idempotencyKey: "github-action:acme/shop:9876543210:deploy:gate.ask:0",
    });
    // Nothing of the runner or the attempt, so a re-run on another machine sends the same request.
    expect(request.body.agent).toBeUndefined();
    expect(request.body.context).toBe(
      [
        "*Changes:* fixes the login bug",
        "",
        "Run: https://github.com/acme/shop/actions/runs/9876543210",
        "Repository: acme/shop",
        "Ref: refs/heads/main",
        `Commit: ${GITHUB.GITHUB_SHA}`,
        "Actor: octocat",
      ].join("\n"),
    );
  });

  it("by default asks with the action's own checkout of the CLI, never a package fetched by name", async ({ relay, expect }) => {
    const next = relay.nextRequest();
    const run = startAction(relay, { question: "Deploy?" }, { ownCli: true });
    relay.end((await next).id, { status: "answered", decision: { answers: { answer: true } }, ...ALICE_ANSWER });
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.outputs.decision).toBe("approved");
    const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as { runs: { steps: { run: string }[] } };
    expect(action.runs.steps[0]!.run).toMatch(/^npm ci --prefix "\$GITHUB_ACTION_PATH"/);
    const script = readFileSync(SCRIPT, "utf8");
    for (const text of [script, ...action.runs.steps.map((step) => step.run)]) expect(text).not.toMatch(/\bnpx\b|npm (install|i) /);
  });

  it("when the person denies, the step fails (fail-on-denial) with decision denied", async ({ relay, expect }) => {
    const next = relay.nextRequest();
    const run = startAction(relay, { question: "Deploy?" });
    relay.end((await next).id, { status: "answered", decision: { answers: { answer: false } }, ...ALICE_ANSWER });
    const result = await run.done;
    expect(result.code).toBe(1);
    expect(result.outputs.decision).toBe("denied");
    expect(result.stdout).toContain("::error::Denied in Slack by alice.");
  });

  it("with fail-on-denial false, a denial lets the step succeed and decision says so", async ({ relay, expect }) => {
    const next = relay.nextRequest();
    const run = startAction(relay, { question: "Deploy?", "fail-on-denial": "false" });
    relay.end((await next).id, { status: "answered", decision: { answers: { answer: false } } });
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.outputs.decision).toBe("denied");
  });

  it("when no one answers in time, the step fails with decision expired", async ({ relay, expect }) => {
    const next = relay.nextRequest();
    const run = startAction(relay, { question: "Deploy?" });
    relay.end((await next).id, { status: "expired" });
    const result = await run.done;
    expect(result.code).toBe(1);
    expect(result.outputs.decision).toBe("expired");
  });

  it("with choices, decision is the chosen option", async ({ relay, expect }) => {
    const next = relay.nextRequest();
    const run = startAction(relay, { question: "Where to?", choices: "staging,production" });
    const request = await next;
    relay.answer(request.id, { answers: { answer: "production" } });
    const result = await run.done;
    expect(result.code).toBe(0);
    expect(result.outputs.decision).toBe("production");
    expect(request.body.questions).toEqual([{ id: "answer", question: "Where to?", type: "choice", options: ["staging", "production"] }]);
  });

  it("when the requester is a GitHub login, it is not sent as requestedBy (the relay could not match it) and a notice says so", async ({ relay, expect }) => {
    const next = relay.nextRequest();
    const run = startAction(relay, { question: "Deploy?" });
    const request = await next;
    relay.answer(request.id, { answers: { answer: true } });
    const result = await run.done;
    expect(request.body.requestedBy).toBeUndefined();
    expect(result.stdout).toContain('::notice::requested-by "octocat" is not a Slack user id or an email');
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`when the job is cancelled (${signal}), the request is cancelled and the step fails`, async ({ relay, expect }) => {
      const next = relay.nextRequest();
      const run = startAction(relay, { question: "Deploy?" });
      const request = await next;
      await until(() => relay.calls.some((c) => c.method === "GET"));
      run.child.kill(signal);
      const result = await run.done;
      expect(result.code).toBe(1);
      expect(relay.requests.get(request.id)!.status).toBe("cancelled");
      expect(result.outputs.decision).toBe("cancelled");
    });
  }

  it("without relay-url, the step fails at once and says what is missing", async ({ relay, expect }) => {
    const result = await startAction(relay, { question: "Deploy?", "relay-url": "" }).done;
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("::error::relay-url is required");
    expect(relay.calls).toHaveLength(0);
  });
});

/**
 * "Re-run jobs": attempt N+1 of the same run and job, on another runner (another
 * working directory here; the host is never sent), against the whole relay.
 */
describe("a re-run of the job, against the relay", { timeout: 60_000 }, () => {
  let relay: FullRelay;
  let workspaces: string;
  beforeEach(async () => {
    relay = await startFullRelay();
    workspaces = mkdtempSync(join(tmpdir(), "gha-runners-"));
  });
  afterEach(async () => {
    await relay.close();
    rmSync(workspaces, { recursive: true, force: true });
    baseExpect(relay.errors()).toEqual([]);
  });

  /** Attempt `attempt` of the run, on a runner of its own. */
  const attempt = (attempt: number, inputs: Record<string, string> = { question: "Deploy?" }) => {
    const cwd = join(workspaces, `runner-${attempt}`);
    mkdirSync(cwd);
    return startAction(relay, inputs, { token: AGENT_TOKEN.token, github: { GITHUB_RUN_ATTEMPT: String(attempt) }, cwd });
  };
  /** Resolves once the step's CLI waits on a request; its id. */
  const waiting = async (run: ActionRun): Promise<string> => {
    await until(() => /asked as request \S+; waiting/.test(run.stderr()), 20_000, "the step waiting on its request");
    return /asked as request (\S+); waiting/.exec(run.stderr())![1]!;
  };
  const lost = async (run: ActionRun) => {
    run.lose();
    await run.done;
  };
  /** Loses `run` while it waits, then starts attempt `next`, which must wait on the same request. */
  const rerunJoining = async (run: ActionRun, next: number): Promise<{ rerun: ActionRun; id: string }> => {
    const id = await waiting(run);
    await lost(run);
    const rerun = attempt(next);
    baseExpect(await waiting(rerun)).toBe(id);
    return { rerun, id };
  };

  plainIt("rejoins the request the lost attempt left pending: one Slack message, and the answer reaches the re-run", async () => {
    const first = attempt(1);
    const posted = await relay.message(0);
    const { rerun: second, id: asked } = await rerunJoining(first, 2);
    await relay.click(posted, Action.confirmYes);
    const result = await second.done;
    baseExpect(result.code).toBe(0);
    baseExpect(result.outputs).toMatchObject({ decision: "approved", "answered-by": ALICE.name, "request-id": asked });
    baseExpect(relay.slack.requestPosts()).toHaveLength(1);
  });

  plainIt("once the request has ended, a re-run asks anew under the key's next number (never the earlier answer), and the one after rejoins that", async () => {
    const first = attempt(1);
    await relay.click(await relay.message(0), Action.confirmYes);
    const approved = await first.done;
    baseExpect(approved.outputs.decision).toBe("approved");
    // The deploy step failed; "Re-run jobs" asks again.
    const second = attempt(2);
    const renewed = await waiting(second);
    baseExpect(renewed).not.toBe(approved.outputs["request-id"]);
    baseExpect(second.stderr()).toContain(`names request ${approved.outputs["request-id"]}, which has ended (answered): asking anew`);
    const posted = await relay.message(1);
    const { rerun: third } = await rerunJoining(second, 3);
    await relay.click(posted, Action.confirmNo);
    const result = await third.done;
    baseExpect(result.code).toBe(1);
    baseExpect(result.outputs).toMatchObject({ decision: "denied", "request-id": renewed });
    baseExpect(relay.slack.requestPosts()).toHaveLength(2);
    const key = "github-action:acme/shop:9876543210:deploy:gate.ask:0";
    baseExpect((await relay.service.get(renewed))?.body.idempotencyKey).toBe(`${key}#2`);
  });

  plainIt("when the job was cancelled, its request is cancelled, and the re-run asks anew", async () => {
    const first = attempt(1);
    const cancelled = await waiting(first);
    first.child.kill("SIGTERM");
    baseExpect((await first.done).outputs.decision).toBe("cancelled");
    const second = attempt(2);
    const renewed = await waiting(second);
    baseExpect(renewed).not.toBe(cancelled);
    await relay.click(await relay.message(1), Action.confirmYes);
    baseExpect((await second.done).outputs).toMatchObject({ decision: "approved", "request-id": renewed });
  });

  plainIt("when the re-run asks something else (the relay's 409), it does not join: it asks anew and says why", async () => {
    const first = attempt(1, { question: "Deploy v1?" });
    const old = await waiting(first);
    await lost(first);
    const second = attempt(2, { question: "Deploy v2?" });
    const renewed = await waiting(second);
    baseExpect(renewed).not.toBe(old);
    baseExpect(second.stderr()).toContain(`names request ${old}, which asked something else: not joined`);
    await relay.click(await relay.message(1), Action.confirmYes);
    baseExpect((await second.done).outputs).toMatchObject({ decision: "approved", "request-id": renewed });
    // The lost attempt's question is left to expire: a matrix leg may still be waiting on it.
    baseExpect((await relay.service.get(old))?.status).toBe("pending");
  });

  plainIt("with an idempotency-key of its own, a re-run takes the earlier answer, and one that asks something else fails on the 409", async () => {
    const own = { question: "Deploy?", "idempotency-key": "deploy-9876543210" };
    const first = attempt(1, own);
    await relay.click(await relay.message(0), Action.confirmYes);
    const approved = await first.done;
    const again = await attempt(2, own).done;
    baseExpect(again.code).toBe(0);
    baseExpect(again.outputs).toMatchObject({ decision: "approved", "request-id": approved.outputs["request-id"] });
    const otherRun = attempt(3, { ...own, question: "Deploy v2?" });
    const other = await otherRun.done;
    baseExpect(other.code).toBe(1);
    baseExpect(other.stdout).toContain("::error::The approval could not be asked");
    baseExpect(otherRun.stderr()).toContain("This idempotency key was already used with a different body");
    baseExpect(relay.slack.requestPosts()).toHaveLength(1);
  });
});

describe("action.yml", () => {
  const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as {
    inputs: Record<string, { default?: string }>;
    outputs: Record<string, { value: string }>;
    runs: { using: string; steps: Array<{ id: string; run: string; env: Record<string, string> }> };
  };

  plainIt("hands every input to the script as INPUT_<NAME>, and takes every output from its step", () => {
    const step = action.runs.steps.find((s) => s.id === "ask")!;
    const expected = Object.fromEntries(Object.keys(action.inputs).map((name) => [`INPUT_${name.replace(/-/g, "_").toUpperCase()}`, `\${{ inputs.${name} }}`]));
    baseExpect(step.env).toEqual({ ...expected, APPROVAL_RELAY_JOB_INDEX: "${{ strategy.job-index }}" });
    baseExpect(step.run).toBe('node "$GITHUB_ACTION_PATH/scripts/github-action.mjs"');
    baseExpect(Object.fromEntries(Object.entries(action.outputs).map(([name, output]) => [name, output.value]))).toEqual(
      Object.fromEntries(["decision", "answered-by", "request-id", "message-url"].map((name) => [name, `\${{ steps.${step.id}.outputs.${name} }}`])),
    );
    baseExpect(action.inputs["fail-on-denial"]!.default).toBe("true");
    baseExpect(action.inputs["requested-by"]!.default).toBe("${{ github.actor }}");
  });
});
