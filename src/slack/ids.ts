/**
 * Every action_id, callback_id and block_id the relay's Slack messages and
 * modals use, shared by the Block Kit builders and the listeners, plus the
 * codecs for button values and modal private_metadata (parsed with zod: they
 * come back from Slack, a trust boundary).
 */
import { z } from "zod";

/** Buttons and selects in request messages and the App Home tab. Every one starts with "relay_". */
export const Action = {
  allow: "relay_allow",
  alwaysAllow: "relay_always_allow",
  /** "Allow for 15 min": answers like Allow / Yes and creates a rule for the token, session and tool. */
  allowForAWhile: "relay_allow_rule",
  edit: "relay_edit",
  deny: "relay_deny",
  denyWithReason: "relay_deny_reason",
  denyAndStop: "relay_deny_stop",
  stepYes: "relay_step_yes",
  stepNo: "relay_step_no",
  stepStop: "relay_step_stop",
  /** One-tap answer: an AskUserQuestion option or an InteractiveQuestion choice. */
  option: "relay_option",
  /** One-tap AskUserQuestion "Other…": opens a modal for free text. */
  other: "relay_other",
  confirmYes: "relay_confirm_yes",
  confirmNo: "relay_confirm_no",
  /** Opens the answer modal (several questions, multi-select, text). */
  answer: "relay_answer",
  /** Opens the modal that shows the full tool input. */
  viewInput: "relay_view_input",
  /** Page buttons inside the full-input modal. */
  viewPage: "relay_view_page",
  /** "+30 min": moves a pending request's deadline (answers nothing). */
  moreTime: "relay_more_time",
  /** App Home: revokes one of the clicker's own live rules (the value is a RuleButtonValue). */
  revokeRule: "relay_revoke_rule",
} as const;

/** Modal callback_ids. */
export const View = {
  edit: "relay_edit_modal",
  denyReason: "relay_deny_modal",
  other: "relay_other_modal",
  answer: "relay_answer_modal",
  input: "relay_input_modal",
  /** Every rule Always allow saves, shown in full before anything is saved (when the message cannot hold them). */
  alwaysAllow: "relay_always_allow_modal",
} as const;

/** block_id / action_id pairs inside modals. */
export const Field = {
  editJson: { block: "edit_input", action: "json" },
  denyReason: { block: "deny_reason", action: "reason" },
  denyInterrupt: { block: "deny_interrupt", action: "interrupt" },
  otherText: { block: "other_text", action: "text" },
  /** Answer modal: one input block per question, `q<index>`; the Other text box is `q<index>_other`. */
  question: (index: number) => ({ block: `q${index}`, action: "value" }),
  questionOther: (index: number) => ({ block: `q${index}_other`, action: "text" }),
} as const;

/** Value of the option radio/checkbox that stands for "Other". */
export const OTHER_VALUE = "__other__";

/** The value of every message button: which request, and for options which question/option. */
export const ButtonValue = z.object({
  /** Request id. */
  r: z.string().min(1).max(100),
  /** Question index. */
  q: z.number().int().min(0).max(100).optional(),
  /** Option index within the question. */
  o: z.number().int().min(0).max(100).optional(),
  /** Page (full-input modal). */
  p: z.number().int().min(0).max(10_000).optional(),
});
export type ButtonValue = z.infer<typeof ButtonValue>;

export function encodeButton(value: ButtonValue): string {
  return JSON.stringify(value);
}

export function decodeButton(raw: unknown): ButtonValue | undefined {
  return decodeJson(ButtonValue, raw);
}

/** The value of an App Home Revoke button: which rule. */
export const RuleButtonValue = z.object({
  /** Rule id. */
  rule: z.string().min(1).max(100),
});
export type RuleButtonValue = z.infer<typeof RuleButtonValue>;

export function encodeRuleButton(value: RuleButtonValue): string {
  return JSON.stringify(value);
}

export function decodeRuleButton(raw: unknown): RuleButtonValue | undefined {
  return decodeJson(RuleButtonValue, raw);
}

/** private_metadata of every relay modal. */
export const ModalMetadata = z.object({
  /** Request id. */
  r: z.string().min(1).max(100),
  /** Question index (Other… modal). */
  q: z.number().int().min(0).max(100).optional(),
  /** Where the request's message lives, to check the interaction against it. */
  c: z.string().max(50).optional(),
  ts: z.string().max(50).optional(),
});
export type ModalMetadata = z.infer<typeof ModalMetadata>;

export function encodeMetadata(value: ModalMetadata): string {
  return JSON.stringify(value);
}

export function decodeMetadata(raw: unknown): ModalMetadata | undefined {
  return decodeJson(ModalMetadata, raw);
}

/** `raw` as Slack sent it back, parsed as JSON and then with `schema`; undefined when either fails. */
function decodeJson<T>(schema: z.ZodType<T>, raw: unknown): T | undefined {
  if (typeof raw !== "string") return undefined;
  try {
    const result = schema.safeParse(JSON.parse(raw));
    return result.success ? result.data : undefined;
  } catch {
    return undefined;
  }
}
