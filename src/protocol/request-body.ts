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

/**
 * Label keys and values: ASCII letters, digits and `. _ - : /`, so they read
 * well in Slack and in a hook URL's `label.<key>=` parameter, and so no
 * look-alike (a Greek "ο" in `prοd`, a trailing zero-width space) can pass
 * for another label and steer a request past the route meant for it.
 */
const SAFE_LABEL = /^[A-Za-z0-9._:/-]*$/;
const SAFE_LABEL_TEXT = "letters (a–z), digits, '.', '_', '-', ':' or '/'";

/** A label key or value as it is kept and compared: NFKC-normalised (a fullwidth `ｐｒｏｄ` is `prod`) and trimmed. */
export function normaliseLabel(text: string): string {
  return text.normalize("NFKC").trim();
}

/** What is wrong with a normalised label text, or undefined. */
function labelProblem(text: string, what: string, min: number, max: number): string | undefined {
  if (SAFE_LABEL.test(text) && text.length >= min && text.length <= max) return undefined;
  const bad = [...text].find((char) => !SAFE_LABEL.test(char));
  const found = bad === undefined ? "" : ` (found ${JSON.stringify(bad)}, U+${bad.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")})`;
  return `label ${what} must be ${min} to ${max} ${SAFE_LABEL_TEXT}${found}`;
}

/** A label key as it is kept and compared: normalised and lower-cased. */
function labelKey(raw: string): string {
  return normaliseLabel(raw).toLowerCase();
}

/** A label key as routes name it (`requireLabels: [env]`): normalised and lower-cased like the keys of Labels. */
export const LabelKey = z
  .string()
  .superRefine((raw, ctx) => {
    const problem = labelProblem(labelKey(raw), "keys", 1, LABEL_LIMITS.key);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .overwrite(labelKey);

/** Where a label map breaks the rules: count, unsafe keys or values (after normalising), keys that become one. */
function labelIssues(raw: Record<string, string>): Array<{ path: string[]; message: string }> {
  const entries = Object.entries(raw);
  const issues: Array<{ path: string[]; message: string }> = [];
  if (entries.length > LABEL_LIMITS.count) issues.push({ path: [], message: `at most ${LABEL_LIMITS.count} labels` });
  const seen = new Set<string>();
  for (const [rawKey, rawValue] of entries) {
    const key = labelKey(rawKey);
    // A value over the limit is refused by the record's own schema already.
    const value = rawValue.length > LABEL_LIMITS.value ? undefined : labelProblem(normaliseLabel(rawValue), "values", 0, LABEL_LIMITS.value);
    const problem = labelProblem(key, "keys", 1, LABEL_LIMITS.key) ?? value;
    if (problem) issues.push({ path: [rawKey], message: problem });
    else if (seen.has(key)) issues.push({ path: [rawKey], message: `is the label ${key} once normalised, given twice` });
    seen.add(key);
  }
  return issues;
}

/** The labels as they are kept and compared: keys normalised and lower-cased, values normalised. */
function normaliseLabels(raw: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(raw).map(([key, value]) => [labelKey(key), normaliseLabel(value)]));
}

/** Labels as the relay reads them back from its store: kept as an earlier version may have accepted them. */
const StoredLabels = z.record(z.string(), z.string().max(LABEL_LIMITS.value));

/**
 * A string map the operator's routes match on (`labels: {env: prod}`); shown
 * in the Slack message. Keys and values are normalised (normaliseLabel), keys
 * also lower-cased, and each must then be safe (SAFE_LABEL): `Env`, `env ` and
 * `ｅｎｖ` are the one key `env`; two keys that become the same are refused.
 * (`overwrite`, not `transform`: the type stays, so the OpenAPI document can
 * show labels in replies too.)
 */
export const Labels = StoredLabels.superRefine((raw, ctx) => {
  for (const issue of labelIssues(raw)) ctx.addIssue({ code: "custom", ...issue });
}).overwrite(normaliseLabels);
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
  /** Checked and normalised as Labels by CreateRequestBody; read back from the store as they were kept. */
  labels: StoredLabels.optional(),
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

export const CreateRequestBody = z
  .discriminatedUnion("kind", [PermissionBody, StepGateBody, AskUserQuestionBody, InteractiveQuestionsBody])
  .superRefine((body, ctx) => {
    for (const issue of labelIssues(body.labels ?? {})) ctx.addIssue({ code: "custom", path: ["labels", ...issue.path], message: issue.message });
  })
  .overwrite((body) => (body.labels === undefined ? body : { ...body, labels: normaliseLabels(body.labels) }));
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
