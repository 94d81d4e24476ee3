/**
 * The Claude Code hook endpoint (issue 3): Claude Code POSTs a PreToolUse
 * hook to /v1/hooks/claude-code and holds the connection; the clock runs from
 * just before the signed Yes click is sent until the whole hook reply has
 * arrived. Each round interleaves hook cycles with core click-to-agent cycles
 * (step_gate, the same request kind) on the same relay, so noise hits both
 * alike, and reports their ratio.
 */
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";
import { Action } from "../src/slack/ids.js";
import { beforeReply, freshChannel, newMarker, type BenchAgent } from "./agent.js";
import { expectJson } from "./http.js";
import { clickToAgent } from "./latency.js";
import { median, medianRound, summarize, type LatencySummary } from "./stats.js";

export interface HookOptions {
  /** Hook samples (and as many core samples) per round. */
  n: number;
  warmup: number;
  rounds: number;
  /** test/fixtures/claude-code/pre-tool-use.json, when it exists. */
  fixturePath: string;
}

export interface HookRound {
  hook: LatencySummary;
  core: LatencySummary;
}

export interface HookResult {
  rounds: HookRound[];
  /** The round with the median hook p50. */
  median: HookRound;
  /** Median over rounds of hook p50 / core p50, and of hook p99 / core p99. */
  ratioP50: number;
  ratioP99: number;
}

type HookInput = Record<string, unknown> & { tool_input: Record<string, unknown> };

/** The PreToolUse body Claude Code sends (the recorded fixture). */
function loadInput(path: string): HookInput {
  const parsed = JSON.parse(readFileSync(path, "utf8")) as HookInput;
  if (parsed.hook_event_name !== "PreToolUse" || typeof parsed.tool_input !== "object") {
    throw new Error(`${path} is not a PreToolUse hook input`);
  }
  return parsed;
}

/** One hook call answered Yes; resolves with click → hook reply milliseconds. */
async function clickToHook(agent: BenchAgent, template: HookInput, sessionId: string): Promise<number> {
  const marker = newMarker();
  const command = `${String(template.tool_input.command ?? "true")} # ${marker}`;
  const input = { ...template, session_id: sessionId, tool_use_id: `toolu_bench_${randomUUID()}`, tool_input: { ...template.tool_input, command } };
  // A channel of its own, as the core cycles have: the relay posts at Slack's pace of one message a second per channel.
  const reply = agent.hook(input, 600, freshChannel());
  reply.catch(() => undefined);
  const message = await beforeReply(agent.messageReady(marker), reply, "POST /v1/hooks/claude-code");
  const click = agent.prepareClick(message, Action.stepYes);

  const started = performance.now();
  const clicked = agent.click(click);
  clicked.catch(() => undefined);
  const answer = await reply;
  const elapsed = performance.now() - started;

  await clicked;
  const output = expectJson<{ hookSpecificOutput?: { permissionDecision?: string } }>(answer, 200, "POST /v1/hooks/claude-code");
  if (output.hookSpecificOutput?.permissionDecision !== "allow") throw new Error(`the hook replied ${answer.body}, not allow`);
  return elapsed;
}

export async function runHook(agent: BenchAgent, options: HookOptions, progress: (line: string) => void): Promise<HookResult> {
  const input = loadInput(options.fixturePath);
  const sessionId = randomUUID();
  for (let i = 0; i < options.warmup; i += 1) {
    await clickToHook(agent, input, sessionId);
    await clickToAgent(agent, "step_gate");
  }
  const rounds: HookRound[] = [];
  for (let round = 1; round <= options.rounds; round += 1) {
    const hook: number[] = [];
    const core: number[] = [];
    for (let i = 0; i < options.n; i += 1) {
      hook.push(await clickToHook(agent, input, sessionId));
      core.push(await clickToAgent(agent, "step_gate"));
    }
    const result = { hook: summarize(hook), core: summarize(core) };
    rounds.push(result);
    progress(
      `round ${round}: hook p50 ${result.hook.p50.toFixed(2)} / core ${result.core.p50.toFixed(2)} ms, p99 ${result.hook.p99.toFixed(2)} / ${result.core.p99.toFixed(2)} ms`,
    );
  }
  return {
    rounds,
    median: medianRound(rounds, (r) => r.hook.p50),
    ratioP50: median(rounds.map((r) => r.hook.p50 / r.core.p50)),
    ratioP99: median(rounds.map((r) => r.hook.p99 / r.core.p99)),
  };
}
