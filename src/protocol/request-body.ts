/**
 * The request bodies agents send (docs/architecture.md §2, §3). Zod schemas are the one
 * source of the request types and of their field limits; the relay parses
 * every body with them, and the client library and the CLI write bodies
 * (and cut long texts) by the same numbers.
 */
import { z } from "zod";
import { matchPattern, patternProblem } from "./pattern.js";

/** Longest wait an agent may ask for (seconds): a week. */
export const MAX_TIMEOUT_SECONDS = 7 * 24 * 3600;

/** Longest accepted length (characters) of the free-text fields. */
export const LIMITS = {
  title: 500,
  context: 20_000,
  toolName: 500,
  displayName: 500,
  description: 5000,
  decisionReason: 5000,
  blockedPath: 5000,
  toolUseId: 500,
  idempotencyKey: 255,
  url: 2000,
  /** `agent.name`, `agent.sessionId`, `agent.host`. */
  agentField: 200,
  /** `agent.cwd`. */
  cwd: 2000,
} as const;

/** Limits of `labels` (docs/architecture.md §7): how many, and the longest key and value (characters). */
export const LABEL_LIMITS = { count: 20, key: 64, value: 256 } as const;

const text = (max: number) => z.string().max(max);
const nonEmpty = (max: number) => z.string().min(1).max(max);

export const JsonObject = z.record(z.string(), z.unknown());
export type JsonObject = z.infer<typeof JsonObject>;

export const AgentInfo = z.object({
  name: text(LIMITS.agentField).optional(),
  sessionId: text(LIMITS.agentField).optional(),
  host: text(LIMITS.agentField).optional(),
  cwd: text(LIMITS.cwd).optional(),
});
export type AgentInfo = z.infer<typeof AgentInfo>;

const httpUrl = z
  .string()
  .max(LIMITS.url)
  .refine((value) => {
    try {
      const url = new URL(value);
      return url.protocol === "http:" || url.protocol === "https:";
    } catch {
      return false;
    }
  }, "must be an http(s) URL");

/** A Slack channel or user id (C…, G…, D…, U…): the body's `channel` and SLACK_DEFAULT_CHANNEL. */
export const SlackChannelId = z.string().regex(/^[A-Z0-9]{8,20}$/, "must be a Slack channel or user id such as C0123456789");

/** A Slack user id (U…, or W… on Enterprise Grid): approvers and `requestedBy`. Never a name. */
export const SlackUserId = z.string().regex(/^[UW][A-Z0-9]{2,30}$/, "must be a Slack user id such as U0123ABCD (ids, never names)");

/** A Slack user group id (S…): approvers by group. Never a handle. */
export const SlackUsergroupId = z.string().regex(/^S[A-Z0-9]{2,30}$/, "must be a Slack user group id such as S0123ABCD (ids, never handles)");

/** Most approvers a route or a request may list, of each sort, and the largest quorum (docs/architecture.md §7). */
export const APPROVER_LIMITS = { users: 100, usergroups: 20, quorum: 20 } as const;

/**
 * Who may answer, by Slack id: people and user groups (a member of any
 * listed group may answer). A route sets it; a request's own `approvers`
 * may only narrow its route's.
 */
export const ApproverList = z.strictObject({
  users: z.array(SlackUserId).max(APPROVER_LIMITS.users).optional(),
  usergroups: z.array(SlackUsergroupId).max(APPROVER_LIMITS.usergroups).optional(),
});
export type ApproverList = z.infer<typeof ApproverList>;

/** Distinct approvals a request needs (docs/architecture.md §7: one person counts once, any deny ends it). */
export const Quorum = z.number().int().min(1).max(APPROVER_LIMITS.quorum);

/** The person a request is made for, by Slack user id or by email (resolved with users.lookupByEmail). */
export const RequestedBy = z.union([z.strictObject({ slackUserId: SlackUserId }), z.strictObject({ email: z.email().max(254) })]);
export type RequestedBy = z.infer<typeof RequestedBy>;

/** What a one-string `requestedBy` (a hook URL's parameter, the CLI's --requested-by) must be. */
export const REQUESTED_BY_FORMAT = "must be a Slack user id such as U0123ABCD or an email address";

/** `requestedBy` written as one string: a Slack user id, else an email; undefined when it is neither. */
export function requestedByFrom(text: string): RequestedBy | undefined {
  const parsed = RequestedBy.safeParse(SlackUserId.safeParse(text).success ? { slackUserId: text } : { email: text });
  return parsed.success ? parsed.data : undefined;
}

/** Label keys: letters, digits and `_ . / -`, so they read well in Slack and in a hook URL's `label.<key>=` parameter. */
const LABEL_KEY = new RegExp(`^[A-Za-z0-9_./-]{1,${LABEL_LIMITS.key}}$`);

/** A string map the operator's routes match on (`labels: {env: prod}`); shown in the Slack message. */
export const Labels = z.record(z.string(), z.string().max(LABEL_LIMITS.value)).superRefine((labels, ctx) => {
  const keys = Object.keys(labels);
  if (keys.length > LABEL_LIMITS.count) ctx.addIssue({ code: "custom", message: `at most ${LABEL_LIMITS.count} labels` });
  for (const key of keys) {
    if (!LABEL_KEY.test(key))
      ctx.addIssue({ code: "custom", path: [key], message: `label keys must be 1 to ${LABEL_LIMITS.key} letters, digits, '_', '.', '/' or '-'` });
  }
});
export type Labels = z.infer<typeof Labels>;

/** Fields every kind shares (docs/architecture.md §3). */
const common = {
  channel: SlackChannelId.optional(),
  title: text(LIMITS.title).optional(),
  context: text(LIMITS.context).optional(),
  agent: AgentInfo.optional(),
  timeoutSeconds: z.number().int().min(1).max(MAX_TIMEOUT_SECONDS).optional(),
  idempotencyKey: nonEmpty(LIMITS.idempotencyKey).optional(),
  callbackUrl: httpUrl.optional(),
  labels: Labels.optional(),
  /** Who the request is made for (a CI job's committer, a deploy's author): with `selfApproval: deny` they may not answer it. */
  requestedBy: RequestedBy.optional(),
  /** Narrows the route's approvers: a subset of them (a wider ask is a 400). */
  approvers: ApproverList.optional(),
  /** Narrows the route's quorum: at least the route's (a smaller one is a 400). */
  quorum: Quorum.optional(),
  /**
   * false: the caller gives up at this request's deadline (a Claude Code
   * hook's own timeout), so nobody may give it more time (no "+30 min").
   * Default true.
   */
  extendable: z.boolean().optional().meta({
    description:
      '`false`: the caller gives up at this request\'s deadline (as a Claude Code hook call does at its own timeout), so the Slack message offers no "+30 min" and nobody can give it more time. Default `true`: whoever may answer can move the deadline by 30 minutes at a time, up to 7 days after the request was created; `expiresAt` then shows the new deadline.',
  }),
};

/** A permission rule update exactly as the Agent SDK passes it; kept verbatim. */
export const PermissionUpdate = z.looseObject({ type: nonEmpty(100) });
export type PermissionUpdate = z.infer<typeof PermissionUpdate>;
/** Most permission updates one request may offer. */
export const MAX_SUGGESTIONS = 50;

export const PermissionBody = z.strictObject({
  kind: z.literal("permission"),
  ...common,
  toolName: nonEmpty(LIMITS.toolName),
  input: JsonObject,
  suggestions: z.array(PermissionUpdate).max(MAX_SUGGESTIONS).optional(),
  displayName: text(LIMITS.displayName).optional(),
  description: text(LIMITS.description).optional(),
  decisionReason: text(LIMITS.decisionReason).optional(),
  blockedPath: text(LIMITS.blockedPath).optional(),
  toolUseId: text(LIMITS.toolUseId).optional(),
  defaultToNo: z.boolean().optional(),
  suppressAlwaysAllowRule: z.boolean().optional(),
});

export const StepGateBody = z.strictObject({
  kind: z.literal("step_gate"),
  ...common,
  toolName: nonEmpty(LIMITS.toolName),
  input: JsonObject,
  toolUseId: text(LIMITS.toolUseId).optional(),
});

export const AskOption = z.object({
  label: nonEmpty(1000),
  description: text(5000).default(""),
  preview: text(20_000).optional(),
});

export const AskQuestion = z
  .object({
    question: nonEmpty(5000),
    header: text(1000).default(""),
    options: z.array(AskOption).min(2).max(4),
    multiSelect: z.boolean().default(false),
  })
  .superRefine((q, ctx) => uniqueBy(q.options, (o) => o.label, "options", "label", "option labels must be unique", ctx));
export type AskQuestion = z.infer<typeof AskQuestion>;

export const AskUserQuestionBody = z
  .strictObject({
    kind: z.literal("ask_user_question"),
    ...common,
    questions: z.array(AskQuestion).min(1).max(4),
  })
  .superRefine((body, ctx) => uniqueBy(body.questions, (q) => q.question, "questions", "question", "question texts must be unique", ctx));

export const QuestionType = z.enum(["choice", "multiChoice", "text", "confirm"]);

const InteractiveQuestionShape = z.object({
  id: nonEmpty(200),
  question: nonEmpty(5000),
  type: QuestionType,
  options: z.array(nonEmpty(1000)).min(1).max(100).optional(),
  default: z.union([z.string().max(20_000), z.array(z.string().max(1000)), z.boolean()]).optional(),
  required: z.boolean().default(true),
  pattern: z.string().max(1000).optional(),
});
export const InteractiveQuestion = InteractiveQuestionShape.superRefine(checkInteractiveQuestion);
export type InteractiveQuestion = z.infer<typeof InteractiveQuestion>;

/** As the relay reads back a body it stored: the shapes without rerunning the agent's patterns (see StoredRequestBody). */
export const StoredInteractiveQuestionsBody = z
  .strictObject({
    kind: z.literal("interactive_questions"),
    ...common,
    questions: z.array(InteractiveQuestion).min(1).max(20),
    autonomous: z.boolean().optional(),
  })
  .superRefine((body, ctx) => uniqueBy(body.questions, (q) => q.id, "questions", "id", "question ids must be unique", ctx));

/** As an agent sends it: text defaults are also matched against their patterns. */
export const InteractiveQuestionsBody = StoredInteractiveQuestionsBody.superRefine(checkDefaultsMatchPatterns);

export const CreateRequestBody = z.discriminatedUnion("kind", [PermissionBody, StepGateBody, AskUserQuestionBody, InteractiveQuestionsBody]);
/**
 * A body the relay itself stored after CreateRequestBody accepted it: the
 * same shapes, without matching the defaults against the agent's patterns
 * again (they were checked at create).
 */
export const StoredRequestBody = z.discriminatedUnion("kind", [PermissionBody, StepGateBody, AskUserQuestionBody, StoredInteractiveQuestionsBody]);
export type CreateRequestBody = z.infer<typeof CreateRequestBody>;
export type PermissionBody = z.infer<typeof PermissionBody>;
export type StepGateBody = z.infer<typeof StepGateBody>;
export type AskUserQuestionBody = z.infer<typeof AskUserQuestionBody>;
export type InteractiveQuestionsBody = z.infer<typeof InteractiveQuestionsBody>;
/** The four request kinds, as the bodies name them. */
export const RequestKind = z.enum([
  PermissionBody.shape.kind.value,
  StepGateBody.shape.kind.value,
  AskUserQuestionBody.shape.kind.value,
  InteractiveQuestionsBody.shape.kind.value,
]);
export type RequestKind = z.infer<typeof RequestKind>;

/** One issue at `<list>.<index>.<field>` for every item whose key an earlier item already has. */
function uniqueBy<T>(items: T[], key: (item: T) => string, list: string, field: string, message: string, ctx: z.RefinementCtx): void {
  const seen = new Set<string>();
  items.forEach((item, index) => {
    const value = key(item);
    if (seen.has(value)) ctx.addIssue({ code: "custom", path: [list, index, field], message });
    seen.add(value);
  });
}

type QuestionShape = z.output<typeof InteractiveQuestionShape>;

function checkInteractiveQuestion(q: QuestionShape, ctx: z.RefinementCtx): void {
  const hasOptions = q.type === "choice" || q.type === "multiChoice";
  if (hasOptions && !q.options) {
    ctx.addIssue({ code: "custom", path: ["options"], message: `options are required for type "${q.type}"` });
  }
  if (!hasOptions && q.options) {
    ctx.addIssue({ code: "custom", path: ["options"], message: `options are not allowed for type "${q.type}"` });
  }
  if (q.options && new Set(q.options).size !== q.options.length) {
    ctx.addIssue({ code: "custom", path: ["options"], message: "options must be unique" });
  }
  if (q.pattern !== undefined) {
    const problem = q.type === "text" ? patternProblem(q.pattern) : 'pattern applies to type "text" only';
    if (problem) ctx.addIssue({ code: "custom", path: ["pattern"], message: problem });
  }
  if (q.default !== undefined) {
    const problem = defaultProblem(q);
    if (problem) ctx.addIssue({ code: "custom", path: ["default"], message: problem });
  }
}

function defaultProblem(q: QuestionShape): string | undefined {
  const value = q.default;
  switch (q.type) {
    case "confirm":
      return typeof value === "boolean" ? undefined : "default must be a boolean for a confirm question";
    case "text":
      if (typeof value !== "string") return "default must be a string for a text question";
      return undefined; // matched against the pattern by checkDefaultsMatchPatterns
    case "choice":
      if (typeof value !== "string") return "default must be a string for a choice question";
      return q.options && !q.options.includes(value) ? "default must be one of options" : undefined;
    case "multiChoice":
      if (!Array.isArray(value)) return "default must be an array of strings for a multiChoice question";
      return q.options && value.some((v) => !q.options!.includes(v)) ? "default must only name options" : undefined;
  }
}

/** Text defaults must match their question's pattern (a pattern that cannot be used is reported on its own field). */
function checkDefaultsMatchPatterns(body: z.output<typeof StoredInteractiveQuestionsBody>, ctx: z.RefinementCtx): void {
  body.questions.forEach((q, index) => {
    if (q.type !== "text" || q.pattern === undefined || typeof q.default !== "string" || patternProblem(q.pattern)) return;
    if (!matchPattern(q.pattern, q.default)) ctx.addIssue({ code: "custom", path: ["questions", index, "default"], message: "default does not match pattern" });
  });
}
