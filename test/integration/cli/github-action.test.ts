/**
 * The GitHub Action (action.yml): its step's script, scripts/github-action.mjs,
 * run as the runner runs it — GitHub's environment variables, INPUT_*
 * variables as action.yml maps them, a GITHUB_OUTPUT file — driving the real
 * `approval-relay ask` against the relay stand-in.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect as baseExpect, it as plainIt } from "vitest";
import { parse } from "yaml";
import { compiledCliEntry, cliTest as it } from "../../helpers/cli.js";
import { TOKEN, type RelayStandIn } from "../../helpers/relay-stand-in.js";
import { until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));
const SCRIPT = join(root, "scripts", "github-action.mjs");

const GITHUB = {
  GITHUB_SERVER_URL: "https://github.com",
  GITHUB_REPOSITORY: "acme/shop",
  GITHUB_RUN_ID: "9876543210",
  GITHUB_RUN_ATTEMPT: "2",
  GITHUB_JOB: "deploy",
  GITHUB_REF: "refs/heads/main",
  GITHUB_SHA: "0123456789abcdef0123456789abcdef01234567",
  GITHUB_ACTOR: "octocat",
};

interface ActionRun {
  child: ReturnType<typeof spawn>;
  done: Promise<{ code: number | null; stdout: string; outputs: Record<string, string>; summary: string }>;
}

/** Starts the action's step with these inputs (names as in action.yml). */
function startAction(relay: RelayStandIn, inputs: Record<string, string>, { ownCli = false } = {}): ActionRun {
  const dir = mkdtempSync(join(tmpdir(), "gha-"));
  const outputFile = join(dir, "output");
  const summaryFile = join(dir, "summary");
  writeFileSync(outputFile, "");
  writeFileSync(summaryFile, "");
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "",
    ...GITHUB,
    GITHUB_OUTPUT: outputFile,
    GITHUB_STEP_SUMMARY: summaryFile,
    RELAY_RETRIES: "1",
    // ownCli: the action's default, the checkout's bin/approval-relay.mjs (built by npm ci, as action.yml's first step does).
    ...(ownCli ? {} : { APPROVAL_RELAY_COMMAND: JSON.stringify([process.execPath, compiledCliEntry()]) }),
    INPUT_RELAY_URL: relay.url,
    INPUT_RELAY_TOKEN: TOKEN,
    INPUT_FAIL_ON_DENIAL: "true",
    INPUT_REQUESTED_BY: GITHUB.GITHUB_ACTOR,
  };
  for (const [name, value] of Object.entries(inputs)) env[`INPUT_${name.replace(/-/g, "_").toUpperCase()}`] = value;
  const child = spawn(process.execPath, [SCRIPT], { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr!.resume();
  const done = new Promise<{ code: number | null; stdout: string; outputs: Record<string, string>; summary: string }>((resolve) => {
    child.on("close", (code) => {
      const outputs = readOutputs(readFileSync(outputFile, "utf8"));
      const summary = readFileSync(summaryFile, "utf8");
      rmSync(dir, { recursive: true, force: true });
      resolve({ code, stdout, outputs, summary });
    });
  });
  return { child, done };
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
      idempotencyKey: "github-action:acme/shop:9876543210:deploy:2",
    });
    expect(request.body.context).toBe(
      [
        "*Changes:* fixes the login bug",
        "",
        "Run: https://github.com/acme/shop/actions/runs/9876543210/attempts/2",
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

describe("action.yml", () => {
  const action = parse(readFileSync(join(root, "action.yml"), "utf8")) as {
    inputs: Record<string, { default?: string }>;
    outputs: Record<string, { value: string }>;
    runs: { using: string; steps: Array<{ id: string; run: string; env: Record<string, string> }> };
  };

  plainIt("hands every input to the script as INPUT_<NAME>, and takes every output from its step", () => {
    const step = action.runs.steps.find((s) => s.id === "ask")!;
    const expected = Object.fromEntries(Object.keys(action.inputs).map((name) => [`INPUT_${name.replace(/-/g, "_").toUpperCase()}`, `\${{ inputs.${name} }}`]));
    baseExpect(step.env).toEqual(expected);
    baseExpect(step.run).toBe('node "$GITHUB_ACTION_PATH/scripts/github-action.mjs"');
    baseExpect(Object.fromEntries(Object.entries(action.outputs).map(([name, output]) => [name, output.value]))).toEqual(
      Object.fromEntries(["decision", "answered-by", "request-id", "message-url"].map((name) => [name, `\${{ steps.${step.id}.outputs.${name} }}`])),
    );
    baseExpect(action.inputs["fail-on-denial"]!.default).toBe("true");
    baseExpect(action.inputs["requested-by"]!.default).toBe("${{ github.actor }}");
  });
});
