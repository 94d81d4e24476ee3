/**
 * `approval-relay ask "Deploy v1.2.3 to production?"`: one question to a
 * person in Slack, for shell scripts and CI jobs. The answer is the exit code
 * (0 yes / 1 no / 2 no answer / 3 error) and, for --choice and --text, the
 * text printed on stdout; while it waits, stderr says where the question is
 * and how long is left (./progress.ts).
 */
import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { endedReason, isAbortError, RelayClientError } from "../client/errors.js";
import type { PassedOverKey } from "../client/relay-client.js";
import type { InteractiveQuestionInput, InteractiveQuestionsRequestBody } from "../client/types.js";
import { InteractiveQuestionsDecision } from "../protocol/decisions.js";
import { ApproverList, Labels, LIMITS, MAX_TIMEOUT_SECONDS, REQUESTED_BY_FORMAT, requestedByFrom } from "../protocol/request-body.js";
import type { RequestView } from "../protocol/request-view.js";
import { clientFor, connection, CONNECTION_OPTIONS, parseSeconds } from "./connection.js";
import type { CliIo } from "./io.js";
import { AskProgress } from "./progress.js";
import { EXIT, USAGE } from "./usage.js";

/** The id of the single question `ask` sends. */
export const QUESTION_ID = "answer";

const OPTIONS = {
  ...CONNECTION_OPTIONS,
  channel: { type: "string" },
  timeout: { type: "string" },
  choice: { type: "string" },
  text: { type: "boolean" },
  title: { type: "string" },
  label: { type: "string", multiple: true },
  "requested-by": { type: "string" },
  context: { type: "string" },
  approver: { type: "string", multiple: true },
  "idempotency-key": { type: "string" },
  "fresh-when-ended": { type: "boolean" },
  "no-host": { type: "boolean" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

export async function ask(args: string[], io: CliIo): Promise<number> {
  const parsed = parseRequest(args, io);
  if (typeof parsed === "number") return parsed;
  const { body, client, json, freshWhenEnded } = parsed;
  const type = body.questions[0]!.type;
  const progress = new AskProgress(io.stderr, io.now);
  try {
    const view = await client.ask(body, {
      signal: io.signal,
      onPending: (request) => progress.update(request),
      ...(freshWhenEnded ? { freshWhenEnded, onPassedOver: (passed: PassedOverKey) => io.stderr.write(`approval-relay: ${passedOver(passed)}\n`) } : {}),
    });
    progress.done();
    if (view.status !== "answered") {
      io.stderr.write(`approval-relay: ${endedReason(view)}\n`);
      if (json) io.stdout.write(`${JSON.stringify(outcome(view, undefined))}\n`);
      return view.status === "failed" ? EXIT.error : EXIT.noAnswer;
    }
    const answer = InteractiveQuestionsDecision.safeParse(view.decision).data?.answers[QUESTION_ID];
    if (type === "confirm" && typeof answer === "boolean") {
      io.stdout.write(json ? `${JSON.stringify(outcome(view, answer ? "yes" : "no"))}\n` : answer ? "yes\n" : "no\n");
      return answer ? EXIT.yes : EXIT.no;
    }
    if (type !== "confirm" && typeof answer === "string") {
      io.stdout.write(json ? `${JSON.stringify(outcome(view, answer))}\n` : `${answer}\n`);
      return EXIT.yes;
    }
    io.stderr.write("approval-relay: the relay's answer does not fit the question\n");
    return EXIT.error;
  } catch (error) {
    progress.done();
    if (isAbortError(error)) {
      io.stderr.write("approval-relay: cancelled; the question was withdrawn\n");
      return EXIT.noAnswer;
    }
    io.stderr.write(`approval-relay: ${describeError(error)}\n`);
    return EXIT.error;
  }
}

function parseRequest(args: string[], io: CliIo) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    return misuse(io, error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout.write(USAGE);
    return EXIT.yes;
  }
  if (positionals.length !== 1 || !positionals[0]!.trim()) return misuse(io, "give the question as one argument, in quotes");
  if (values.choice !== undefined && values.text) return misuse(io, "use --choice or --text, not both");
  const timeoutSeconds = values.timeout === undefined ? undefined : parseSeconds(values.timeout, MAX_TIMEOUT_SECONDS);
  if (values.timeout !== undefined && timeoutSeconds === undefined) {
    return misuse(io, `--timeout must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS}`);
  }
  const options = values.choice
    ?.split(",")
    .map((option) => option.trim())
    .filter(Boolean);
  if (options !== undefined && (options.length === 0 || new Set(options).size !== options.length)) {
    return misuse(io, "--choice needs distinct options separated by commas, e.g. --choice staging,production");
  }
  const labels = values.label === undefined ? undefined : parseLabels(values.label);
  if (typeof labels === "string") return misuse(io, labels);
  const requestedByText = values["requested-by"];
  const requestedBy = requestedByText === undefined ? undefined : requestedByFrom(requestedByText);
  if (requestedByText !== undefined && requestedBy === undefined) return misuse(io, `--requested-by ${REQUESTED_BY_FORMAT}`);
  const approvers = values.approver === undefined ? undefined : parseApprovers(values.approver);
  if (typeof approvers === "string") return misuse(io, approvers);
  const key = values["idempotency-key"];
  // --fresh-when-ended adds "#2" … "#100" to the key.
  const longestKey = values["fresh-when-ended"] ? LIMITS.idempotencyKey - 4 : LIMITS.idempotencyKey;
  if (key !== undefined && (key.length === 0 || key.length > longestKey)) {
    return misuse(io, `--idempotency-key must be 1 to ${longestKey} characters`);
  }
  if (values["fresh-when-ended"] && key === undefined)
    return misuse(io, "--fresh-when-ended needs --idempotency-key (it says when to join the request that key names)");
  const conn = connection(values, io.env);
  if (typeof conn === "string") return misuse(io, conn);
  const question: InteractiveQuestionInput = options
    ? { id: QUESTION_ID, question: positionals[0]!, type: "choice", options }
    : { id: QUESTION_ID, question: positionals[0]!, type: values.text ? "text" : "confirm" };
  const body: InteractiveQuestionsRequestBody = {
    kind: "interactive_questions",
    questions: [question],
    ...(values["no-host"] ? {} : { agent: { host: hostname(), cwd: io.cwd } }),
    ...(values.channel === undefined ? {} : { channel: values.channel }),
    ...(values.title === undefined ? {} : { title: values.title }),
    ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }),
    ...(labels === undefined ? {} : { labels }),
    ...(requestedBy === undefined ? {} : { requestedBy }),
    ...(values.context === undefined ? {} : { context: values.context }),
    ...(approvers === undefined ? {} : { approvers }),
    ...(key === undefined ? {} : { idempotencyKey: key }),
  };
  return { body, client: clientFor(conn, io), json: values.json === true, freshWhenEnded: values["fresh-when-ended"] === true };
}

/** Why --fresh-when-ended did not join the request a key names, for stderr. */
function passedOver({ key, id, status }: PassedOverKey): string {
  const request = id ? `request ${id}` : "its request";
  if (status === "mismatch") return `the key ${key} names ${request}, which asked something else: not joined, asking under the next key`;
  return `the key ${key} names ${request}, which has ended (${status}): asking anew under the next key`;
}

/** `--label env=prod --label team=payments` → the labels, or what is wrong with them. */
function parseLabels(pairs: string[]): Labels | string {
  const labels: Record<string, string> = {};
  for (const pair of pairs) {
    const equals = pair.indexOf("=");
    if (equals <= 0) return `--label needs key=value, e.g. --label env=prod (got a label without "key=")`;
    const key = pair.slice(0, equals);
    if (Object.hasOwn(labels, key)) return `--label ${key} is given twice`;
    labels[key] = pair.slice(equals + 1);
  }
  const parsed = Labels.safeParse(labels);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  return `--label ${issue.path.length > 0 ? `${String(issue.path[0])}: ` : ""}${issue.message}`;
}

/** `--approver U0ALICE01 --approver S0OPS0001` → people and user groups, or what is wrong with them. */
function parseApprovers(ids: string[]): ApproverList | string {
  const users = ids.filter((id) => /^[UW]/.test(id));
  const usergroups = ids.filter((id) => id.startsWith("S"));
  const parsed = ApproverList.safeParse({ ...(users.length > 0 ? { users } : {}), ...(usergroups.length > 0 ? { usergroups } : {}) });
  const other = ids.find((id) => !/^[UWS]/.test(id));
  if (other !== undefined) return `--approver takes Slack ids, a person (U0123ABCD) or a user group (S0123ABCD), got "${other}"`;
  return parsed.success ? parsed.data : `--approver ${parsed.error.issues[0]!.message}`;
}

/** What --json prints: the request's id and end, the answer ("yes", "no", the choice or the text), who gave it and where. */
function outcome(view: RequestView, answer: string | undefined) {
  return {
    id: view.id,
    status: view.status,
    ...(answer === undefined ? {} : { answer }),
    ...(view.answeredBy ? { answeredBy: view.answeredBy } : {}),
    ...(view.slack ? { slack: view.slack } : {}),
    ...(view.error ? { error: view.error } : {}),
  };
}

export function describeError(error: unknown): string {
  if (error instanceof RelayClientError) {
    if (error.status === undefined) return `the relay could not be reached: ${error.message}`;
    const later = error.retryAfterMs === undefined ? "" : `; try again in ${Math.ceil(error.retryAfterMs / 1000)} s`;
    return `the relay refused the request: ${error.message}${later}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function misuse(io: CliIo, message: string): number {
  io.stderr.write(`approval-relay ask: ${message}\n\n${USAGE}`);
  return EXIT.error;
}
