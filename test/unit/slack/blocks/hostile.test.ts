/**
 * Every message and modal stays inside Slack's limits, and no agent text
 * turns into markup or carries an invisible or direction-changing character, for the largest and nastiest requests the schemas
 * accept, in every state a request can end in; and so do the reminders,
 * escalations and notices under the most crowded policy, and the App Home
 * tab listing as many of them, and of the nastiest rules, as it shows.
 */
import { describe, expect, it } from "vitest";
import type { Decision } from "../../../../src/protocol/decisions.js";
import type { Person } from "../../../../src/protocol/request-view.js";
import type { RequestPolicy, RequestRecord } from "../../../../src/requests/model.js";
import { approversAt, type RefusalReason } from "../../../../src/requests/policy.js";
import {
  answerModal,
  approvalCountedNotice,
  duplicateApprovalNotice,
  escalationPost,
  HOME_LIMITS,
  homeView,
  revokedNotice,
  escalationText,
  refusalNotice,
  reminderText,
  denyReasonModal,
  editModal,
  endedMessage,
  inputModal,
  inputPageCount,
  otherModal,
  requestMessage,
} from "../../../../src/slack/blocks/index.js";
import { checkMessageLimits, checkViewLimits } from "../../../helpers/block-kit-limits.js";
import { answered, askRecord, cancelled, CREATED_AT, expired, failed, interactiveRecord, permissionRecord, stepGateRecord } from "../../../fixtures/records.js";
import { hiddenCharacters, unescapedMarkup } from "../../../helpers/blocks.js";
import { ruleOf } from "../../../helpers/rule-store-contract.js";

const NASTY = "<!channel> <@U123> <http://evil.example|click> <!subteam^S1|@team> & &amp; ``` `` ` *b* _i_ 😀 \u202e\u2066\u200b\ufeff\u001b\r\u{E0041}\n";
/** `n` characters of hostile text; `tag` keeps otherwise equal strings apart. */
const big = (n: number, tag = "") => (tag + NASTY.repeat(Math.ceil(n / NASTY.length))).slice(0, n);

const MB = 1_000_000;
const common = {
  title: big(500),
  context: big(20_000),
  agent: { name: big(200), sessionId: big(200), host: big(200), cwd: big(2000) },
  labels: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`${i}`.padStart(64, "k"), big(256, `${i}`)])),
};
const permissionExtras = {
  ...common,
  displayName: big(500),
  description: big(5000),
  decisionReason: big(5000),
  blockedPath: big(5000),
  toolUseId: big(500),
  defaultToNo: true,
  suggestions: Array.from({ length: 50 }, (_, i) => ({
    type: "addRules",
    rules: [{ toolName: big(1000, `${i}`), ruleContent: big(1000) }],
    behavior: "allow",
    destination: "session",
  })),
};

const wide = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`${NASTY}${i}`, big(50, `${i}`)]));
const deep = JSON.parse(`{"a":${"[".repeat(100_000)}"<!channel>"${"]".repeat(100_000)}}`) as Record<string, unknown>;
const inputs: Record<string, Record<string, unknown>> = {
  "a 1 MB command": { command: big(MB), description: big(5000) },
  "1 MB of ampersands": { command: "&".repeat(MB) },
  "1 MB of backticks": { command: "`".repeat(MB) },
  "half a million emoji": { command: "😀".repeat(MB / 2) },
  "1 MB of newlines": { command: "\n".repeat(MB) },
  "a 10,000-key object": wide,
  "JSON nested 100,000 deep": deep,
};

const records: Array<[string, RequestRecord]> = [];
for (const [name, input] of Object.entries(inputs)) {
  records.push([`permission Bash with ${name}`, permissionRecord({ ...permissionExtras, toolName: "Bash", input })]);
  records.push([`permission for a hostile tool with ${name}`, permissionRecord({ ...permissionExtras, toolName: big(500), input })]);
  records.push([`step gate with ${name}`, stepGateRecord({ ...common, toolName: big(500), input })]);
}
records.push(
  ["permission Write of 1 MB", permissionRecord({ ...permissionExtras, toolName: "Write", input: { file_path: big(5000), content: big(MB) } })],
  [
    "permission Edit of 800 KB",
    permissionRecord({
      ...permissionExtras,
      toolName: "Edit",
      input: { file_path: big(5000), old_string: big(400_000), new_string: big(400_000, "x"), replace_all: true, extra: big(100_000) },
    }),
  ],
);

/** Edit, MultiEdit and Write at their largest and nastiest, shown as diffs in both kinds. */
const hugeEdits = Array.from({ length: 100 }, (_, i) => ({
  old_string: big(4000, `${i}`),
  new_string: big(4000, `x${i}`),
  replace_all: i % 2 === 0 ? true : big(50),
  [NASTY]: big(100),
}));
const fileInputs: Array<[string, string, Record<string, unknown>]> = [
  ["MultiEdit of 100 huge edits", "MultiEdit", { file_path: big(5000), edits: hugeEdits, extra: big(100_000) }],
  [
    "MultiEdit of 20,000 small edits",
    "MultiEdit",
    { file_path: big(500), edits: Array.from({ length: 20_000 }, (_, i) => ({ old_string: `${NASTY}${i}`, new_string: `\`${i}\`` })) },
  ],
  ["Edit of 1 MB of backticks", "Edit", { file_path: "``", old_string: "`".repeat(MB / 2), new_string: "``\n".repeat(MB / 6) }],
  ["Edit creating a file of half a million emoji", "Edit", { file_path: big(500), old_string: "", new_string: "😀".repeat(MB / 2) }],
  ["Write of 1 MB of newlines", "Write", { file_path: big(500), content: "\n".repeat(MB) }],
  ["Write of 1 MB on one line", "Write", { file_path: big(500), content: big(MB).replaceAll("\n", " ") }],
];
for (const [name, toolName, input] of fileInputs) {
  records.push([`permission ${name}`, permissionRecord({ ...permissionExtras, toolName, input })]);
  records.push([`step gate ${name}`, stepGateRecord({ ...common, toolName, input })]);
}
records.push(
  ["step gate Write of 1 MB", stepGateRecord({ ...common, toolName: "Write", input: { file_path: big(5000), content: big(MB) } })],
  [
    "step gate Edit of 800 KB",
    stepGateRecord({ ...common, toolName: "Edit", input: { file_path: big(5000), old_string: big(400_000), new_string: big(400_000, "x") } }),
  ],
);

const askOption = (j: number) => ({ label: big(1000, `${j}`), description: big(5000), preview: big(20_000) });
const askQuestion = (i: number, multiSelect: boolean) => ({
  question: big(5000, `${i}`),
  header: big(1000),
  multiSelect,
  options: [0, 1, 2, 3].map(askOption),
});
records.push(
  ["4 AskUserQuestion questions × 4 huge options", askRecord({ ...common, questions: [0, 1, 2, 3].map((i) => askQuestion(i, i % 2 === 1)) })],
  ["one-tap AskUserQuestion with huge options", askRecord({ ...common, questions: [askQuestion(0, false)] })],
);

const hundred = Array.from({ length: 100 }, (_, o) => big(1000, `${o}`));
const pattern = `(?:<!channel>|<@U123>|&)?[\\s\\S]*${"(?:x)?".repeat(150)}`;
const interactiveQuestion = (i: number) => {
  const base = { id: big(200, `${i}`), question: big(5000, `${i}`) };
  switch (i % 5) {
    case 0:
      return { ...base, type: "choice" as const, options: hundred, default: hundred[3] };
    case 1:
      return { ...base, type: "multiChoice" as const, options: hundred, default: hundred.slice(0, 50) };
    case 2:
      return { ...base, type: "text" as const, pattern, default: big(20_000), required: false };
    case 3:
      return { ...base, type: "text" as const, pattern, default: big(2000) };
    default:
      return { ...base, type: "confirm" as const };
  }
};
records.push(
  ["20 InteractiveQuestions", interactiveRecord({ ...common, questions: Array.from({ length: 20 }, (_, i) => interactiveQuestion(i)) })],
  [
    "20 InteractiveQuestions in autonomous mode",
    interactiveRecord({ ...common, autonomous: true, questions: Array.from({ length: 20 }, (_, i) => interactiveQuestion(i)) }),
  ],
  [
    "one-tap choice of 20 huge options",
    interactiveRecord({ ...common, questions: [{ id: "c", question: big(5000), type: "choice", options: hundred.slice(0, 20) }] }),
  ],
  ["one-tap confirm", interactiveRecord({ ...common, questions: [{ id: "c", question: big(5000), type: "confirm" }] })],
);

const HOSTILE_PERSON: Person = { id: "<!channel>", name: big(1000) };

function decisions(record: RequestRecord): Decision[] {
  const body = record.body;
  switch (body.kind) {
    case "permission":
      return [
        { behavior: "allow", updatedInput: body.input },
        { behavior: "allow", updatedInput: body.input, updatedPermissions: body.suggestions ?? [] },
        { behavior: "deny", message: big(100_000) },
        { behavior: "deny", message: "Denied by alice in Slack.", interrupt: true },
      ];
    case "step_gate":
      return [{ reply: "y" }, { reply: "n" }, { reply: "q" }];
    case "ask_user_question":
      return [{ answers: Object.fromEntries(body.questions.map((q) => [q.question, big(50_000)])), response: big(50_000) }];
    case "interactive_questions":
      return [
        {
          answers: Object.fromEntries(
            body.questions.map((q) => [q.id, q.type === "confirm" ? true : q.type === "multiChoice" ? (q.options ?? []) : big(50_000)]),
          ),
        },
      ];
  }
}

function endings(record: RequestRecord): RequestRecord[] {
  return [
    ...decisions(record).flatMap((decision) => [answered(record, decision), answered(record, decision, HOSTILE_PERSON)]),
    answered(record, decisions(record)[0]!, { id: "relay", name: "autonomous mode" }),
    expired(record),
    cancelled(record, big(10_000), big(1000)),
    cancelled(record, undefined, big(1000)),
    failed(record, big(10_000)),
  ];
}

const meta = { r: "req-0001", c: "C0123456789", ts: "1700000000.000100" };

describe.each(records)("%s", (_name, record) => {
  it("fits Slack's limits and shows no agent markup, pending and in every ending", () => {
    for (const message of [requestMessage(record), ...endings(record).map(endedMessage)]) {
      expect(checkMessageLimits(message)).toEqual([]);
      expect(unescapedMarkup(message)).toEqual([]);
      expect(hiddenCharacters(message)).toEqual([]);
    }
  });

  it("opens modals that fit Slack's limits and show no agent markup", () => {
    const questions = "questions" in record.body ? record.body.questions.length : 0;
    const views = [
      editModal(record, meta),
      denyReasonModal(record, meta),
      answerModal(record, meta),
      ...Array.from({ length: questions }, (_, i) => otherModal(record, i, meta)),
      inputModal(record, 0),
      inputModal(record, inputPageCount(record) - 1),
    ];
    for (const view of views) {
      expect(checkViewLimits(view)).toEqual([]);
      expect(unescapedMarkup(view, ["initial_value"])).toEqual([]);
      expect(hiddenCharacters(view, ["initial_value"])).toEqual([]);
    }
  });
});

/** The longest ids the schemas accept, as many as a policy may list, and an approval from all but one of a quorum of 20. */
const LONG_USERS = Array.from({ length: 100 }, (_, i) => `U${String(i).padStart(30, "0")}`);
const LONG_GROUPS = Array.from({ length: 20 }, (_, i) => `S${String(i).padStart(30, "0")}`);
const PERMALINK = "https://acme.slack.com/archives/C0123456789/p1700000000000100";
const crowdedPolicy: RequestPolicy = {
  alwaysAllow: "all",
  approvers: { users: LONG_USERS, usergroups: LONG_GROUPS },
  quorum: 20,
  selfApproval: "deny",
  requestedBy: { id: LONG_USERS[0]! },
  reminders: [60],
  escalate: [{ after: 60, users: LONG_USERS, usergroups: LONG_GROUPS, channel: "C0ESCALATE" }],
};
const crowdedApprovals = Array.from({ length: 19 }, (_, i) => ({
  person: i % 2 === 0 ? { id: LONG_USERS[i]!, name: big(1000) } : HOSTILE_PERSON,
  at: CREATED_AT + i,
}));
/** Markup the builders write on purpose under this policy. */
const OWN = [...LONG_USERS.map((id) => `<@${id}>`), ...LONG_GROUPS.map((id) => `<!subteam^${id}>`), "<#C0ESCALATE>", `<${PERMALINK}|Open the request>`];
const CROWDED = [
  "permission Bash with a 1 MB command",
  "permission Edit of 800 KB",
  "permission MultiEdit of 100 huge edits",
  "step gate with a 10,000-key object",
  "4 AskUserQuestion questions × 4 huge options",
  "20 InteractiveQuestions",
  "one-tap confirm",
];
const crowded = records
  .filter(([name]) => CROWDED.includes(name))
  .map(([name, record]): [string, RequestRecord] => [name, { ...record, policy: crowdedPolicy, postedAt: CREATED_AT, approvals: crowdedApprovals }]);
const REASONS: RefusalReason[] = ["not_approver", "self_approval", "other_workspace", "unverified"];

it("runs the crowded policy on every kind", () => {
  expect(crowded.map(([name]) => name).sort()).toEqual([...CROWDED].sort());
});

describe.each(crowded)("%s, under the most crowded policy", (_name, record) => {
  it("fits Slack's limits and shows no markup but the approvers' mentions, pending and in every ending", () => {
    for (const message of [requestMessage(record), ...endings(record).map(endedMessage)]) {
      expect(checkMessageLimits(message)).toEqual([]);
      expect(unescapedMarkup(message, [], OWN)).toEqual([]);
      expect(hiddenCharacters(message)).toEqual([]);
    }
  });

  it("reminds, escalates and tells people within Slack's limits, with no markup but the approvers' mentions", () => {
    const now = CREATED_AT + 120_000;
    const texts = [
      reminderText(record, now),
      escalationText(record, crowdedPolicy.escalate![0]!, now),
      ...REASONS.map((reason) => refusalNotice({ reason, approvers: approversAt(record, now)! }, record)),
      approvalCountedNotice(record),
      duplicateApprovalNotice(record),
    ];
    for (const text of texts) {
      expect(text.length).toBeLessThanOrEqual(3000);
      expect(unescapedMarkup(text, [], OWN)).toEqual([]);
      expect(hiddenCharacters(text)).toEqual([]);
    }
    const post = escalationPost(record, PERMALINK, now);
    expect(checkMessageLimits(post)).toEqual([]);
    expect(unescapedMarkup(post, [], OWN)).toEqual([]);
    expect(hiddenCharacters(post)).toEqual([]);
  });
});

describe("the App Home tab", () => {
  it("lists as many of the nastiest requests and rules as it shows, with every count and notice, within Slack's limits and with no agent markup", () => {
    const largest = [...records, ...crowded].map(([, record]) => record);
    const waiting = Array.from({ length: HOME_LIMITS.requests }, (_, i) => ({ record: largest[i % largest.length]!, permalink: PERMALINK }));
    const rules = Array.from({ length: HOME_LIMITS.rules }, (_, i) =>
      ruleOf({ toolName: big(MB, `${i}`), sessionId: big(MB), token: big(5000), uses: 1_000_000, createdBy: HOSTILE_PERSON }),
    );
    const view = homeView({
      now: CREATED_AT,
      notice: revokedNotice(rules[0]!),
      waiting: { shown: waiting, more: 1_000_000, moreUncounted: true, unchecked: 1_000_000 },
      rules: { shown: rules, more: true, permalinks: new Map(rules.map((rule) => [rule.id, PERMALINK])) },
    });
    expect(checkViewLimits(view)).toEqual([]);
    // views.publish refuses a view over 250 kB (view_too_large).
    expect(Buffer.byteLength(JSON.stringify(view))).toBeLessThan(250_000);
    expect(unescapedMarkup(view, [], ["<#C0123456789>", `<${PERMALINK}|Open the request>`])).toEqual([]);
    expect(hiddenCharacters(view)).toEqual([]);
  });
});
