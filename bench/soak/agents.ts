/**
 * The agents of the soak: each of several tokens runs a few loops, and each
 * loop asks one question after another, drawn from a steady mix of the four
 * kinds and three ways of hearing back: a permission or an AskUserQuestion
 * long-polled with the client library (which retries through restarts), a
 * Claude Code PreToolUse hook call held as Claude Code holds it (no retry),
 * a permission or InteractiveQuestion[] answered by callback to a local
 * receiver. For every question one person of its own (a Slack user id no
 * other request has) is planned to answer a certain way, or nobody is, and
 * the decision that answer must give is written down before anything is
 * sent.
 */
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { RelayClient } from "../../src/client/index.js";
import { STEP_GATE_REJECTED, STEP_GATE_STOPPED } from "../../src/protocol/decisions.js";
import { DRAINING_DENY, SLACK_UNAVAILABLE_DENY } from "../../src/requests/hooks/calls.js";
import { Action, Field } from "../../src/slack/ids.js";
import type { AgentOutcome, SoakKind, SoakRequest, Via } from "./history.js";
import { answer, type PeopleDeps, type Plan } from "./people.js";

export interface AgentDeps {
  people: PeopleDeps;
  /** A base URL for one agent call, as a load balancer would route it (undefined: no instance up). */
  route(viaProxy: boolean): URL | undefined;
  requests: SoakRequest[];
  /** Where callbacks go; `delivered(id)` resolves with the first delivery's outcome. */
  callbackUrl: string;
  delivered(id: string, until: number): Promise<AgentOutcome | undefined>;
  random: () => number;
  /** The ranges questions' timeouts are drawn from. */
  timeouts: Timeouts;
}

/** Whole seconds, both ends included. */
export interface SecondsRange {
  min: number;
  max: number;
}

export interface Timeouts {
  /** API requests (long-polled or answered by callback). */
  request: SecondsRange;
  /** PreToolUse hook calls. */
  hook: SecondsRange;
}

/** Long enough for a person, short enough that many expire within a run. */
export const DEFAULT_TIMEOUTS: Timeouts = { request: { min: 15, max: 40 }, hook: { min: 20, max: 40 } };

export interface AgentToken {
  name: string;
  token: string;
  channel: string;
}

let people = 0;
/** A Slack user id no other request's person has, so every notice is told to exactly one click's person. */
const newPerson = () => `U0S${(++people).toString(36).toUpperCase().padStart(7, "0")}`;

/** Runs one agent loop until `stopAt`: a question, its answer, a short pause, the next. */
export async function agentLoop(deps: AgentDeps, token: AgentToken, viaProxy: boolean, stopAt: number): Promise<void> {
  const client = new RelayClient({
    url: "http://relay.soak.invalid",
    token: token.token,
    fetch: (input, init) => {
      const base = deps.route(viaProxy);
      if (!base) return Promise.reject(new TypeError("fetch failed: no instance up"));
      const url = new URL(input);
      return fetch(new URL(url.pathname + url.search, base), init);
    },
    retries: 20,
    maxRetryDelayMs: 2000,
  });
  const sessionId = randomUUID();
  while (Date.now() < stopAt) {
    const pick = deps.random();
    if (pick < 0.25) await longPoll(deps, client, token, "permission", sessionId);
    else if (pick < 0.45) await longPoll(deps, client, token, "ask_user_question", sessionId);
    else if (pick < 0.7) await hookCall(deps, token, viaProxy, sessionId);
    else if (pick < 0.85) await callback(deps, client, token, "permission", sessionId);
    else await callback(deps, client, token, "interactive_questions", sessionId);
    await sleep(300 + deps.random() * 1200);
  }
}

/** A whole number of seconds in `range`. */
const secondsIn = (deps: AgentDeps, { min, max }: SecondsRange) => min + Math.floor(deps.random() * (max - min + 1));

interface Question {
  body: Record<string, unknown>;
  /** Each way of answering, with the decision it must give. */
  plans: Array<{ plan: Plan; expected: unknown }>;
}

function question(kind: SoakKind, marker: string, person: string): Question {
  switch (kind) {
    case "permission": {
      const input = { command: `kubectl rollout restart deploy/web # ${marker}`, description: "Restart the web pods" };
      return {
        body: { kind, toolName: "Bash", input },
        plans: [
          { plan: { how: "button", actionId: Action.allow }, expected: { behavior: "allow", updatedInput: input } },
          { plan: { how: "button", actionId: Action.deny }, expected: { behavior: "deny", message: `Denied by ${person.toLowerCase()} in Slack.` } },
          { plan: { how: "deny-reason", reason: `not now ${marker}` }, expected: { behavior: "deny", message: `not now ${marker}` } },
        ],
      };
    }
    case "ask_user_question": {
      const text = `Which region should the canary go to? ${marker}`;
      const options = [
        { label: "eu-west-1", description: "Ireland" },
        { label: "us-east-1", description: "Virginia" },
      ];
      return {
        body: { kind, questions: [{ question: text, header: "Region", options, multiSelect: false }] },
        plans: [
          { plan: { how: "button", actionId: Action.option, option: 1 }, expected: { answers: { [text]: "us-east-1" } } },
          { plan: { how: "thread", text: "ap-south-1" }, expected: { answers: { [text]: "ap-south-1" }, response: "ap-south-1" } },
        ],
      };
    }
    case "interactive_questions": {
      const questions = [
        { id: "color", question: `Which colour for the banner? ${marker}`, type: "choice", options: ["blue", "green"] },
        { id: "note", question: "Anything to add?", type: "text" },
      ];
      const values = {
        [Field.question(0).block]: {
          [Field.question(0).action]: { type: "radio_buttons", selected_option: { value: "1", text: { type: "plain_text", text: "green" } } },
        },
        [Field.question(1).block]: { [Field.question(1).action]: { type: "plain_text_input", value: `ship it ${marker}` } },
      };
      return {
        body: { kind, questions },
        plans: [{ plan: { how: "answer-modal", values }, expected: { answers: { color: "green", note: `ship it ${marker}` } } }],
      };
    }
    case "step_gate":
      throw new Error("step gates come from hook calls");
  }
}

/** Records the request, plans its person and starts them; returns the request. */
function plan(deps: AgentDeps, request: Omit<SoakRequest, "person">, plans: Question["plans"], person: string): SoakRequest {
  const record: SoakRequest = request;
  deps.requests.push(record);
  if (deps.random() < 0.15) return record; // nobody answers: it must expire
  const chosen = plans[Math.floor(deps.random() * plans.length)]!;
  record.person = { user: person, expected: chosen.expected };
  void act(deps, record, chosen.plan);
  return record;
}

/** The person: waits for the message, takes their time (now and then right up to the deadline), then answers. */
async function act(deps: AgentDeps, request: SoakRequest, how: Plan): Promise<void> {
  const message = await deps.people.slack.posted(request.marker, request.deadline);
  if (!message) return;
  request.id ??= message.id;
  const window = request.deadline - Date.now();
  const late = deps.random() < 0.1;
  await sleep(Math.max(0, late ? window - 1500 + deps.random() * 2000 : 500 + deps.random() * window * 0.6));
  await answer(deps.people, request.marker, request.person!.user, how, request.deadline + 2000).catch((error: unknown) => {
    deps.people.problems.push(`${request.marker}: ${String(error)}`);
  });
}

/** Creates a question of `kind` (with a callback URL, for "callback") and plans its person; returns it with its id. */
async function create(deps: AgentDeps, client: RelayClient, token: AgentToken, kind: SoakKind, via: Via, sessionId: string): Promise<SoakRequest> {
  const marker = `soak-${randomUUID()}`;
  const person = newPerson();
  const { body, plans } = question(kind, marker, person);
  const createdAt = Date.now();
  const created = await client.request({
    ...body,
    channel: token.channel,
    timeoutSeconds: secondsIn(deps, deps.timeouts.request),
    agent: { name: `${token.name}-agent`, sessionId },
    ...(via === "callback" ? { callbackUrl: deps.callbackUrl } : {}),
  } as never);
  return plan(deps, { marker, id: created.id, kind, via, token: token.name, createdAt, deadline: Date.parse(created.expiresAt) }, plans, person);
}

async function longPoll(deps: AgentDeps, client: RelayClient, token: AgentToken, kind: SoakKind, sessionId: string): Promise<void> {
  const request = await create(deps, client, token, kind, "long-poll", sessionId);
  try {
    const view = await client.wait(request.id!, { expiresAt: new Date(request.deadline).toISOString() });
    request.agent = { at: Date.now(), status: view.status as AgentOutcome["status"], ...(view.decision === undefined ? {} : { decision: view.decision }) };
  } catch (error) {
    request.agent = { at: Date.now(), status: "lost", detail: String(error) };
  }
}

async function callback(deps: AgentDeps, client: RelayClient, token: AgentToken, kind: SoakKind, sessionId: string): Promise<void> {
  const request = await create(deps, client, token, kind, "callback", sessionId);
  // The agent does not wait; the receiver hears the outcome. Waited for here only to keep the loop's pace.
  const outcome = await deps.delivered(request.id!, request.deadline + 60_000);
  if (outcome) request.agent = outcome;
}

/** A PreToolUse hook call as Claude Code makes it: held until the reply, never retried. */
async function hookCall(deps: AgentDeps, token: AgentToken, viaProxy: boolean, sessionId: string): Promise<void> {
  const marker = `soak-${randomUUID()}`;
  const person = newPerson();
  const seconds = secondsIn(deps, deps.timeouts.hook);
  const input = {
    session_id: sessionId,
    transcript_path: `/tmp/${sessionId}.jsonl`,
    cwd: "/srv/app",
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: `make release # ${marker}`, description: "Cut a release" },
    tool_use_id: `toolu_${randomUUID().replaceAll("-", "")}`,
  };
  const plans: Question["plans"] = [
    { plan: { how: "button", actionId: Action.stepYes }, expected: { reply: "y" } },
    { plan: { how: "button", actionId: Action.stepNo }, expected: { reply: "n" } },
    { plan: { how: "button", actionId: Action.stepStop }, expected: { reply: "q" } },
    { plan: { how: "thread", text: "y" }, expected: { reply: "y" } },
    { plan: { how: "thread", text: "n" }, expected: { reply: "n" } },
  ];
  const createdAt = Date.now();
  const request = plan(deps, { marker, kind: "step_gate", via: "hook", token: token.name, createdAt, deadline: createdAt + seconds * 1000 }, plans, person);
  void deps.people.slack.posted(marker, request.deadline).then((message) => (request.id ??= message?.id));
  const base = deps.route(viaProxy);
  try {
    if (!base) throw new TypeError("fetch failed: no instance up");
    const reply = await fetch(new URL(`/v1/hooks/claude-code?timeout=${seconds}&channel=${token.channel}`, base), {
      method: "POST",
      headers: { authorization: `Bearer ${token.token}`, "content-type": "application/json" },
      body: JSON.stringify(input),
      signal: AbortSignal.timeout(seconds * 1000),
    });
    const text = await reply.text();
    request.agent = { at: Date.now(), ...hookOutcome(reply.status, text) };
  } catch (error) {
    request.agent = { at: Date.now(), status: "lost", detail: String(error) };
  }
}

/** What a hook reply tells Claude Code, in the request's terms. */
export function hookOutcome(status: number, text: string): Omit<AgentOutcome, "at"> {
  if (status !== 200) return { status: "lost", detail: `HTTP ${status}: ${text.slice(0, 200)}` };
  const output = JSON.parse(text) as { continue?: boolean; hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } };
  const decision = output.hookSpecificOutput?.permissionDecision;
  const reason = output.hookSpecificOutput?.permissionDecisionReason ?? "";
  if (decision === "allow") return { status: "answered", decision: { reply: "y" } };
  if (output.continue === false && reason === STEP_GATE_STOPPED) return { status: "answered", decision: { reply: "q" } };
  if (reason === STEP_GATE_REJECTED) return { status: "answered", decision: { reply: "n" } };
  // Nothing was created (or what was is cancelled): the relay asked no one.
  if (reason === DRAINING_DENY || reason === SLACK_UNAVAILABLE_DENY) return { status: "refused", detail: reason };
  return { status: "denied", detail: reason };
}
