import { hostname } from "node:os";
import { describe } from "vitest";
import { type RelayStandIn, TOKEN } from "../../helpers/relay-stand-in.js";
import { CONCURRENT_CLI_TIMEOUT_MS, cliTest as it, runCli, startCli, startCliOnTerminal } from "../../helpers/cli.js";

/** What the countdown writes before each rewrite of its line: carriage return, then ANSI "erase line". */
const CLEAR_LINE = "\r\x1b[2K";
import { until } from "../../helpers/until.js";
import { ALICE } from "../../fixtures/people.js";

/** Runs `approval-relay ask …` and answers the request it creates with `decision`. */
async function askAnswered(relay: RelayStandIn, env: Record<string, string>, args: string[], decision: unknown) {
  const next = relay.nextRequest();
  const run = runCli(["ask", ...args], { env });
  const request = await next;
  relay.answer(request.id, decision);
  return { ...(await run), request };
}

async function askEnded(relay: RelayStandIn, env: Record<string, string>, status: "expired" | "cancelled" | "failed") {
  const next = relay.nextRequest();
  const run = runCli(["ask", "Deploy?"], { env });
  relay.end((await next).id, { status, error: "channel_not_found" });
  return run;
}

describe.concurrent("approval-relay ask", { timeout: CONCURRENT_CLI_TIMEOUT_MS }, () => {
  it("when the person answers yes, it exits 0 and the request was one confirm question with the given channel, title and timeout", async ({
    relay,
    env,
    expect,
  }) => {
    const args = ["Deploy v1.2.3 to production?", "--channel", "C0123456789", "--timeout", "900", "--title", "Release"];
    const result = await askAnswered(relay, env, [...args, "--label", "env=prod", "--label", "team/owner=pay:ments"], {
      answers: { answer: true },
    });
    expect(result).toMatchObject({ code: 0, stdout: "yes\n" });
    expect(result.request.body).toMatchObject({
      kind: "interactive_questions",
      questions: [{ id: "answer", question: "Deploy v1.2.3 to production?", type: "confirm" }],
      channel: "C0123456789",
      timeoutSeconds: 900,
      title: "Release",
      labels: { env: "prod", "team/owner": "pay:ments" },
    });
  });

  it("when given --requested-by, the request says who it is for: a Slack user id, or else an email", async ({ relay, env, expect }) => {
    const byId = await askAnswered(relay, env, ["Deploy?", "--requested-by", ALICE.id], { answers: { answer: true } });
    expect(byId.request.body.requestedBy).toEqual({ slackUserId: ALICE.id });
    const byEmail = await askAnswered(relay, env, ["Deploy?", "--requested-by", "alice@example.com"], { answers: { answer: true } });
    expect(byEmail.request.body.requestedBy).toEqual({ email: "alice@example.com" });
  });

  it("when given --context, --approver and --idempotency-key, the request carries them", async ({ relay, env, expect }) => {
    const args = [
      "Deploy?",
      "--context",
      "Run: https://ci.example.com/1",
      "--approver",
      ALICE.id,
      "--approver",
      "S0OPS0001",
      "--idempotency-key",
      "gha:1:deploy:1",
    ];
    const result = await askAnswered(relay, env, args, { answers: { answer: true } });
    expect(result.code).toBe(0);
    expect(result.request.body).toMatchObject({
      context: "Run: https://ci.example.com/1",
      approvers: { users: [ALICE.id], usergroups: ["S0OPS0001"] },
      idempotencyKey: "gha:1:deploy:1",
    });
  });

  it("names this machine and directory as the agent, and with --no-host leaves both out (a re-run on another runner sends the same body)", async ({
    relay,
    env,
    expect,
  }) => {
    const named = await askAnswered(relay, env, ["Deploy?"], { answers: { answer: true } });
    expect(named.request.body.agent).toEqual({ host: hostname(), cwd: expect.any(String) });
    const anonymous = await askAnswered(relay, env, ["Deploy?", "--no-host"], { answers: { answer: true } });
    expect(anonymous.code).toBe(0);
    expect(anonymous.request.body).not.toHaveProperty("agent");
  });

  it("with --json, it prints the request's id, end, answer and who answered, and exits as without it", async ({ relay, env, expect }) => {
    const answered = await askAnswered(relay, env, ["Deploy?", "--json"], { answers: { answer: false } });
    expect(answered.code).toBe(1);
    expect(JSON.parse(answered.stdout)).toMatchObject({ id: answered.request.id, status: "answered", answer: "no" });
    const next = relay.nextRequest();
    const run = runCli(["ask", "Deploy?", "--json"], { env });
    const request = await next;
    relay.end(request.id, { status: "expired" });
    const expired = await run;
    expect(expired.code).toBe(2);
    expect(JSON.parse(expired.stdout)).toEqual({ id: request.id, status: "expired" });
  });

  it("when the person answers no, it exits 1", async ({ relay, env, expect }) => {
    const result = await askAnswered(relay, env, ["Deploy?"], { answers: { answer: false } });
    expect(result).toMatchObject({ code: 1, stdout: "no\n" });
  });

  it("when asked with --choice, it sends one choice question and prints the chosen option", async ({ relay, env, expect }) => {
    const result = await askAnswered(relay, env, ["Where to?", "--choice", "staging, production,canary"], { answers: { answer: "production" } });
    expect(result).toMatchObject({ code: 0, stdout: "production\n" });
    expect(result.request.body.questions).toEqual([{ id: "answer", question: "Where to?", type: "choice", options: ["staging", "production", "canary"] }]);
  });

  it("when asked with --text, it sends one text question and prints the text", async ({ relay, env, expect }) => {
    const result = await askAnswered(relay, env, ["Release note?", "--text"], { answers: { answer: "Fixes the login bug" } });
    expect(result).toMatchObject({ code: 0, stdout: "Fixes the login bug\n" });
    expect(result.request.body.questions).toEqual([{ id: "answer", question: "Release note?", type: "text" }]);
  });

  it("when no one answers in time, it exits 2 and says so", async ({ relay, env, expect }) => {
    const result = await askEnded(relay, env, "expired");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/No one answered in Slack within 10 minutes/);
  });

  it("when the request is cancelled, it exits 2", async ({ relay, env, expect }) => {
    const result = await askEnded(relay, env, "cancelled");
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/cancelled/);
  });

  it("when Slack refuses the message, it exits 3 with Slack's reason", async ({ relay, env, expect }) => {
    const result = await askEnded(relay, env, "failed");
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/channel_not_found/);
  });

  it("while it waits, stderr says the request id and deadline, then where Slack shows it, then how long is left; stdout gets only the answer", async ({
    relay,
    env,
    expect,
  }) => {
    const next = relay.nextRequest();
    const run = startCli(["ask", "Deploy v1.2.3?", "--timeout", "20"], { env });
    const request = await next;
    await until(() => run.output.stderr.includes("asked as request"), 10_000);
    expect(run.output.stderr).toMatch(
      new RegExp(
        `^approval-relay: asked as request ${request.id}; waiting for an answer until \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC \\(in \\d+ seconds\\)\n`,
      ),
    );
    request.slack = { channel: "C0123456789", ts: "1712345678.000100" };
    await until(() => run.output.stderr.includes("posted in Slack"), 10_000);
    expect(run.output.stderr).toContain(
      "approval-relay: posted in Slack channel C0123456789 (message 1712345678.000100): https://slack.com/app_redirect?channel=C0123456789\n",
    );
    await until(() => run.output.stderr.includes("left"), 25_000);
    expect(run.output.stderr).toMatch(/\napproval-relay: still waiting for an answer, 10 seconds left\n$/);
    relay.answer(request.id, { answers: { answer: true } });
    const result = await run.done;
    expect(result).toMatchObject({ code: 0, stdout: "yes\n" });
    expect(result.stderr.split("\n").filter(Boolean)).toHaveLength(3);
    expect(result.stderr).not.toContain("\r");
  });

  it("on a real terminal, the countdown is one line rewritten every second, cleared before the next line and before the answer", async ({
    relay,
    env,
    expect,
  }) => {
    const next = relay.nextRequest();
    const run = startCliOnTerminal(["ask", "Deploy v1.2.3?", "--timeout", "120"], env);
    const request = await next;
    const countdowns = () => run.output.stdout.split(CLEAR_LINE).filter((part) => /^approval-relay: waiting for an answer, \d:\d\d left$/.test(part));
    await until(() => countdowns().length >= 3, 15_000, `three countdown writes; the terminal showed ${JSON.stringify(run.output.stdout)}`);
    relay.answer(request.id, { answers: { answer: true } });
    const result = await run.done;
    expect(result.code).toBe(0);
    const screen = result.stdout;
    // Each write rewrites the same line (carriage return, erase line), counting down from at most 2:00.
    const shown = countdowns().map((part) => /(\d):(\d\d) left/.exec(part)!.slice(1).map(Number));
    const seconds = shown.map(([m, s]) => m! * 60 + s!);
    expect(seconds[0]).toBeLessThanOrEqual(120);
    expect(seconds).toEqual([...seconds].sort((a, b) => b - a));
    expect(screen.split("\n").filter((line) => line.includes("waiting for an answer,"))).toHaveLength(1);
    // The first line stands alone, and the answer comes on a cleared line of its own.
    expect(screen).toMatch(new RegExp(`^approval-relay: asked as request ${request.id}; waiting for an answer until [^\r\n]+\r\n`));
    expect(screen.endsWith(`${CLEAR_LINE}yes\r\n`), JSON.stringify(screen.slice(-80))).toBe(true);
  });

  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    it(`when it gets ${signal} while waiting, it withdraws the question from Slack and exits 2`, async ({ relay, env, expect }) => {
      const next = relay.nextRequest();
      const run = startCli(["ask", "Deploy?"], { env });
      const request = await next;
      await until(() => relay.calls.some((c) => c.method === "GET"));
      run.child.kill(signal);
      const result = await run.done;
      expect(result.code).toBe(2);
      expect(relay.callsTo("DELETE", `/v1/requests/${request.id}`)).toHaveLength(1);
      expect(relay.requests.get(request.id)!.status).toBe("cancelled");
    });
  }

  it("when the relay cannot be reached, it exits 3 after its retries and says why", async ({ relay, env, expect }) => {
    await relay.stop();
    const result = await runCli(["ask", "Deploy?"], { env });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/could not be reached.*ECONNREFUSED/);
  });

  it("when the token is refused, it exits 3 and says the relay refused", async ({ relay, env, expect }) => {
    const result = await runCli(["ask", "Deploy?"], { env: { ...env, RELAY_TOKEN: "wrong-token-000000000" } });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/refused.*401/);
    expect(relay.calls).toHaveLength(1);
  });

  it("when --url and --token are given, they are used instead of the environment", async ({ relay, expect }) => {
    const next = relay.nextRequest();
    const run = runCli(["ask", "Deploy?", "--url", relay.url, "--token", TOKEN], { env: { RELAY_RETRIES: "0" } });
    relay.answer((await next).id, { answers: { answer: true } });
    await expect(run).resolves.toMatchObject({ code: 0 });
  });

  const misuse: Array<[string, string[], Record<string, string> | undefined, RegExp]> = [
    ["no question", [], undefined, /give the question/],
    ["two questions", ["Deploy?", "Now?"], undefined, /give the question/],
    ["--choice with --text", ["Deploy?", "--choice", "a,b", "--text"], undefined, /not both/],
    ["an empty --choice", ["Deploy?", "--choice", " , "], undefined, /--choice needs/],
    ["a repeated --choice option", ["Deploy?", "--choice", "a,a"], undefined, /--choice needs/],
    ["a --timeout that is not a number", ["Deploy?", "--timeout", "soon"], undefined, /--timeout must be/],
    ["a --timeout of 0", ["Deploy?", "--timeout", "0"], undefined, /--timeout must be/],
    ["an unknown flag", ["Deploy?", "--colour", "red"], undefined, /Unknown option '--colour'/],
    ["an --approver that is not a Slack id", ["Deploy?", "--approver", "alice"], undefined, /--approver takes Slack ids/],
    ["an --approver that is not a valid Slack id", ["Deploy?", "--approver", "U0"], undefined, /--approver must be a Slack user id/],
    ["a --label without =", ["Deploy?", "--label", "prod"], undefined, /--label needs key=value/],
    ["a --label with an empty key", ["Deploy?", "--label", "=prod"], undefined, /--label needs key=value/],
    ["a --label key given twice", ["Deploy?", "--label", "env=prod", "--label", "env=dev"], undefined, /--label env is given twice/],
    ["a --label key with a space", ["Deploy?", "--label", "my env=prod"], undefined, /--label my env: label keys must be 1 to 64 letters/],
    [
      "a --requested-by that is a name",
      ["Deploy?", "--requested-by", "alice"],
      undefined,
      /--requested-by must be a Slack user id such as U0123ABCD or an email address/,
    ],
    ["an empty --requested-by", ["Deploy?", "--requested-by", ""], undefined, /--requested-by must be a Slack user id/],
    ["--fresh-when-ended without --idempotency-key", ["Deploy?", "--fresh-when-ended"], undefined, /--fresh-when-ended needs --idempotency-key/],
    [
      "--fresh-when-ended with a key too long to number",
      ["Deploy?", "--fresh-when-ended", "--idempotency-key", "k".repeat(252)],
      undefined,
      /--idempotency-key must be 1 to 251 characters/,
    ],
    ["no RELAY_URL", ["Deploy?"], { RELAY_TOKEN: TOKEN }, /RELAY_URL is not set/],
    ["no RELAY_TOKEN", ["Deploy?"], { RELAY_URL: "http://127.0.0.1:9" }, /RELAY_TOKEN is not set/],
    ["a RELAY_URL that is not http", ["Deploy?"], { RELAY_URL: "relay.local", RELAY_TOKEN: TOKEN }, /must start with http/],
  ];
  for (const [what, args, customEnv, message] of misuse) {
    it(`when given ${what}, it exits 3 with the reason and the usage on stderr, and asks nothing`, async ({ relay, env, expect }) => {
      const result = await runCli(["ask", ...args], { env: customEnv ?? env });
      expect(result.code).toBe(3);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).toMatch(/Usage: approval-relay/);
      expect(result.stdout).toBe("");
      expect(relay.calls).toHaveLength(0);
    });
  }
});

describe.concurrent("approval-relay", { timeout: CONCURRENT_CLI_TIMEOUT_MS }, () => {
  it("when the command is unknown, it exits 3 with the usage on stderr", async ({ env, expect }) => {
    const result = await runCli(["deploy"], { env });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/unknown command "deploy"[\s\S]*Usage: approval-relay/);
  });

  it("when asked for help, it prints the usage and exits 0", async ({ env, expect }) => {
    const result = await runCli(["--help"], { env });
    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^Usage: approval-relay/) });
  });
});
