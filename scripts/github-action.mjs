/**
 * The GitHub Action's step (action.yml at the repository root): asks the
 * deploy gate's question in Slack with the relay's own CLI,
 * `approval-relay ask --json`, and turns its answer into the step's outputs
 * and exit code. Plain Node with no dependencies. The CLI is the action's own
 * checkout, at the ref the workflow pinned: action.yml's first step runs
 * `npm ci` there (which builds dist/), and this script runs its
 * bin/approval-relay.mjs — never a package fetched from the npm registry by
 * name, which anyone could publish. APPROVAL_RELAY_COMMAND (a JSON array)
 * runs another command instead (runners with the CLI installed, the tests).
 *
 * Inputs arrive as INPUT_* variables (action.yml maps them); GitHub's own
 * variables (GITHUB_RUN_ID, GITHUB_JOB, …) give the request its context and
 * its idempotency key. A cancelled job sends the step SIGINT or SIGTERM: it
 * is passed to the CLI, which cancels the request (its Slack message says so).
 *
 * A re-run ("Re-run jobs", attempt N+1) sends the same request as the attempt
 * before it: no attempt number and no runner (`--no-host`) in the body, and a
 * key of the run, job and step. So it rejoins a request that attempt left
 * pending (its runner was lost), and `--fresh-when-ended` asks anew under the
 * key's next number once that request has ended: an earlier attempt's answer
 * (an approval whose deploy then failed, a denial, an expiry) never decides
 * this attempt. A key set in `idempotency-key` is used as it is, so a re-run
 * with it takes the earlier answer.
 */
import { spawn } from "node:child_process";
import { appendFileSync } from "node:fs";
import { createHash, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";

/** `approval-relay ask` exit codes (src/cli/usage.ts). */
const EXIT = { yes: 0, no: 1, noAnswer: 2, error: 3 };

const env = process.env;
const input = (name) => (env[`INPUT_${name.replace(/-/g, "_").toUpperCase()}`] ?? "").trim();
const fail = (message) => {
  console.log(`::error::${escapeCommand(message)}`);
  process.exit(1);
};

const relayUrl = input("relay-url");
const relayToken = input("relay-token");
const question = input("question");
if (!relayUrl) fail("relay-url is required: the relay's address, e.g. https://relay.example.com");
if (!relayToken) fail("relay-token is required: an agent token of the relay, from a secret");
if (!question) fail("question is required, e.g. Deploy ${{ github.sha }} to production?");

const args = ["ask", question, "--json"];
const title = input("title");
if (title) args.push("--title", title);
const timeoutMinutes = input("timeout-minutes");
if (timeoutMinutes) {
  if (!/^\d{1,6}$/.test(timeoutMinutes) || Number(timeoutMinutes) < 1) fail(`timeout-minutes must be a whole number of minutes, got "${timeoutMinutes}"`);
  args.push("--timeout", String(Number(timeoutMinutes) * 60));
}
const choices = input("choices");
if (choices) args.push("--choice", choices);
for (const label of list(input("labels"))) args.push("--label", label);
for (const approver of list(input("approvers"))) args.push("--approver", approver);
const channel = input("channel");
if (channel) args.push("--channel", channel);

const requestedBy = input("requested-by");
const requestedByIsSlack = /^[UW][A-Z0-9]{2,30}$/.test(requestedBy) || /^[^@\s]+@[^@\s]+$/.test(requestedBy);
if (requestedByIsSlack) args.push("--requested-by", requestedBy);
else if (requestedBy) {
  console.log(
    `::notice::requested-by "${escapeCommand(requestedBy)}" is not a Slack user id or an email, so the relay cannot keep that person from approving: pass their Slack id or email to use selfApproval rules`,
  );
}

args.push("--context", context(), "--no-host");
const ownKey = input("idempotency-key");
if (ownKey) args.push("--idempotency-key", ownKey);
else args.push("--idempotency-key", idempotencyKey(), "--fresh-when-ended");

const failOnDenial = (input("fail-on-denial") || "true").toLowerCase();
if (failOnDenial !== "true" && failOnDenial !== "false") fail(`fail-on-denial must be true or false, got "${failOnDenial}"`);

const [command, ...commandArgs] = cliCommand();
const child = spawn(command, [...commandArgs, ...args], {
  env: { ...env, RELAY_URL: relayUrl, RELAY_TOKEN: relayToken },
  stdio: ["ignore", "pipe", "inherit"],
});
let stdout = "";
child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
let signalled = false;
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    signalled = true;
    child.kill(signal);
  });
}
child.on("error", (error) => fail(`could not start approval-relay (${command}): ${error.message}`));
child.on("close", (code) => finish(code ?? EXIT.error));

function finish(code) {
  const result = parseResult(stdout);
  const answered = code === EXIT.yes ? (choices ? (result?.answer ?? "") : "approved") : code === EXIT.no ? "denied" : (result?.status ?? "error");
  const decision = signalled ? "cancelled" : answered;
  setOutput("decision", decision);
  setOutput("answered-by", result?.answeredBy?.name ?? result?.answeredBy?.id ?? "");
  setOutput("request-id", result?.id ?? "");
  setOutput("message-url", messageUrl(result?.slack));
  summary(decision, result);
  if (signalled) {
    console.log("::warning::The job was cancelled: the request was withdrawn from Slack.");
    process.exit(1);
  }
  if (code === EXIT.yes) return process.exit(0);
  if (code === EXIT.error) fail("The approval could not be asked (see the message above).");
  const why =
    code === EXIT.no
      ? `Denied in Slack${result?.answeredBy ? ` by ${result.answeredBy.name ?? result.answeredBy.id}` : ""}.`
      : `No answer: the request ${decision}.`;
  if (failOnDenial === "true") fail(why);
  console.log(`::notice::${escapeCommand(why)} (fail-on-denial is false, so the job goes on)`);
  process.exit(0);
}

/**
 * The run's URL, repository, ref, commit and actor, after the caller's own
 * context. The same in every attempt of the run (the URL shows its latest),
 * so a re-run sends the same request.
 */
function context() {
  const server = env.GITHUB_SERVER_URL || "https://github.com";
  const repository = env.GITHUB_REPOSITORY ?? "";
  const lines = [
    `Run: ${server}/${repository}/actions/runs/${env.GITHUB_RUN_ID ?? ""}`,
    `Repository: ${repository}`,
    `Ref: ${env.GITHUB_REF ?? ""}`,
    `Commit: ${env.GITHUB_SHA ?? ""}`,
    `Actor: ${env.GITHUB_ACTOR ?? ""}`,
  ];
  const own = input("context");
  return [own, lines.join("\n")].filter(Boolean).join("\n\n");
}

/**
 * The repository, run id, job, step (GITHUB_ACTION: this action's place in
 * the job) and matrix leg: the same in every attempt of the run, so a re-run
 * finds its request (`--fresh-when-ended` decides whether to join it). A key
 * too long for the relay, with room for "#100", is hashed.
 */
function idempotencyKey() {
  const { GITHUB_REPOSITORY: repository, GITHUB_RUN_ID: runId, GITHUB_JOB: job, GITHUB_ACTION: step } = env;
  if (!runId || !job) return `github-action:${randomUUID()}`;
  const key = ["github-action", repository ?? "", runId, job, step ?? "", env.APPROVAL_RELAY_JOB_INDEX || "0"].join(":");
  return key.length <= 240 ? key : `github-action:${runId}:${createHash("sha256").update(key).digest("hex")}`;
}

function cliCommand() {
  if (env.APPROVAL_RELAY_COMMAND) {
    const parsed = JSON.parse(env.APPROVAL_RELAY_COMMAND);
    if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every((part) => typeof part === "string"))
      fail("APPROVAL_RELAY_COMMAND must be a JSON array of strings");
    return parsed;
  }
  return [process.execPath, fileURLToPath(new URL("../bin/approval-relay.mjs", import.meta.url))];
}

/** Items separated by commas or new lines, blanks left out. */
function list(text) {
  return text
    .split(/[,\n]/)
    .map((item) => item.trim())
    .filter(Boolean);
}

function parseResult(text) {
  try {
    return JSON.parse(text.trim().split("\n").at(-1) ?? "");
  } catch {
    return undefined;
  }
}

/** A link to the Slack message: the workspace's URL when given (slack-workspace-url), else Slack's own redirect. */
function messageUrl(slack) {
  if (!slack?.channel || !slack?.ts) return "";
  const base = (input("slack-workspace-url") || "https://slack.com").replace(/\/+$/, "");
  return `${base}/archives/${slack.channel}/p${slack.ts.replace(".", "")}`;
}

/** Writes one output as GITHUB_OUTPUT wants a value that may hold any text: name<<delimiter. */
function setOutput(name, value) {
  if (!env.GITHUB_OUTPUT) return;
  const delimiter = `ghadelimiter_${randomUUID()}`;
  appendFileSync(env.GITHUB_OUTPUT, `${name}<<${delimiter}\n${value}\n${delimiter}\n`);
}

function summary(decision, result) {
  if (!env.GITHUB_STEP_SUMMARY) return;
  const by = result?.answeredBy ? ` by ${result.answeredBy.name ?? result.answeredBy.id}` : "";
  appendFileSync(env.GITHUB_STEP_SUMMARY, `**${question}**: ${decision}${by}\n`);
}

/** Workflow commands end at a new line and treat % specially. */
function escapeCommand(text) {
  return String(text).replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}
