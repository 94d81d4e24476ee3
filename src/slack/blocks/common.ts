/**
 * The parts every request message shares: the header, who asks (the agent
 * token's name and what the agent said about itself), the title and the
 * agent's context, plus how people and times are written. The title and the
 * context are the agent's own words, so they are block-quoted (the context
 * under "The agent says:"): they cannot pass for the relay's own lines such
 * as "Approvals 1 of 2". A request with invisible or direction-changing
 * characters anywhere gets a warning line under the header.
 */
import type { KnownBlock } from "@slack/types";
import type { Person } from "../../protocol/request-view.js";
import type { RequestRecord } from "../../requests/model.js";
import { RELAY_PERSON } from "../../requests/new-record.js";
import type { CreateRequestBody } from "../../protocol/request-body.js";
import type { Fitter, Leaf } from "./budget.js";
import { context, header, section } from "./elements.js";
import { policyBlocks } from "./approvers.js";
import { joinWithin, personText } from "./people.js";
import { cutShort } from "./text.js";
import { anyHidden } from "../../protocol/visible-text.js";

/** A message shows a pending request (with its buttons) or how it ended (without them). */
export type Mode = "pending" | "ended";

/** The header line of each kind. */
export function headerText(body: CreateRequestBody): string {
  switch (body.kind) {
    case "permission":
      return "Permission request";
    case "step_gate":
      return "Proposed action";
    case "ask_user_question":
      return body.questions.length > 1 ? "Questions from the agent" : "Question from the agent";
    case "interactive_questions":
      return "Questions";
  }
}

export function commonLeaves(body: CreateRequestBody): Leaf[] {
  const leaves: Leaf[] = [];
  if (body.title) leaves.push({ key: "title", raw: body.title, encoding: "quote", weight: 2, cap: 600 });
  if (body.context) leaves.push({ key: "context", raw: body.context, encoding: "quote", weight: 3, cap: 2800 });
  return leaves;
}

/** Header, title, who asks, the request's labels, who it is for and who may answer, and the agent's context. */
export function topBlocks(record: RequestRecord, fit: Fitter, mode: Mode): KnownBlock[] {
  const blocks: KnownBlock[] = [header("header", headerText(record.body))];
  if (anyHidden(record.body)) blocks.push(context("hidden_characters", [HIDDEN_WARNING]));
  if (record.body.title) blocks.push(section("title", fit.text("title")));
  blocks.push(context("requester", requesterTexts(record, mode)));
  const labels = labelsText(record.body.labels);
  if (labels) blocks.push(context("labels", [labels]));
  blocks.push(...policyBlocks(record, mode === "pending"));
  if (record.body.context) blocks.push(section("context", `_The agent says:_\n${fit.text("context")}`));
  return blocks;
}

/** What starts each question of a question request: the quoted lines under it are the agent's words. */
export const AGENT_ASKS = "_The agent asks:_\n";

/** The warning on a request that holds invisible or direction-changing characters. */
export const HIDDEN_WARNING =
  "⚠️ *This request contains invisible or direction-changing characters.* Each is shown as ⟨U+…⟩ where it sits; what runs is what you see here, not what another app shows.";

/** Room for an agent's name, session or host (up to 200 characters each): ordinary ones always fit whole. */
const AGENT_FIELD = 250;

function requesterTexts(record: RequestRecord, mode: Mode): string[] {
  const texts = [`Requested by *${cutShort(record.tokenName, 100) || "an agent"}*`];
  const agent = record.body.agent;
  if (agent?.name) texts.push(`Agent *${cutShort(agent.name, AGENT_FIELD)}*`);
  if (agent?.sessionId) texts.push(`Session ${cutShort(agent.sessionId, AGENT_FIELD)}`);
  if (agent?.host) texts.push(`Host ${cutShort(agent.host, AGENT_FIELD)}`);
  if (agent?.cwd) texts.push(`In ${cutShort(agent.cwd, 300)}`);
  if (mode === "pending") texts.push(`Expires ${slackDate(record.expiresAt, "{date_short_pretty} {time}")}`);
  return texts;
}

/** Longest label value shown (characters); the request keeps it whole. */
const LABEL_VALUE_SHOWN = 60;
/** Room for the labels line: well under Slack's 3,000 characters of a context element, even escaped. */
const LABELS_LINE = 1500;

/** "Labels: env=prod, team=payments", escaped, values cut short; labels past the line's room are counted. */
export function labelsText(labels: Record<string, string> | undefined): string | undefined {
  const entries = Object.entries(labels ?? {});
  if (entries.length === 0) return undefined;
  const texts = entries.map(([key, value]) => `${cutShort(key, 64)}=${cutShort(value, LABEL_VALUE_SHOWN)}`);
  return `Labels: ${joinWithin(texts, LABELS_LINE)}`;
}

/** A Slack date token: readers see it in their own time zone, the fallback is UTC. */
export function slackDate(ms: number, format = "{time}"): string {
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return "at an unknown time";
  const hhmm = date.toISOString().slice(11, 16);
  const fallback = format === "{time}" ? `${hhmm} UTC` : `${date.toISOString().slice(0, 10)} ${hhmm} UTC`;
  return `<!date^${Math.floor(ms / 1000)}^${format}|${fallback}>`;
}

/** "by <@U123>", or "automatically (autonomous mode)" when the relay answered itself. */
export function byWhom(person: Person | undefined): string {
  if (!person) return "";
  if (person.id === RELAY_PERSON.id) return "automatically (autonomous mode)";
  return `by ${personText(person)}`;
}
