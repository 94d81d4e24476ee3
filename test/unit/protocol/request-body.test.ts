/**
 * The request schemas: realistic bodies of each kind parse with their
 * defaults applied; every structural problem is refused at the right path;
 * lengths are lenient where docs/architecture.md §2 says so.
 */
import { describe, expect, it } from "vitest";
import { CreateRequestBody, MAX_TIMEOUT_SECONDS } from "../../../src/protocol/request-body.js";

const bash = { kind: "permission", toolName: "Bash", input: { command: "npm test", description: "Run the tests" } };
const gate = { kind: "step_gate", toolName: "Write", input: { file_path: "/tmp/a.txt", content: "hi" } };
const option = (label: string) => ({ label, description: `${label} option` });
const askQuestion = (question: string, labels = ["Yes", "No"]) => ({
  question,
  header: "Choice",
  options: labels.map(option),
  multiSelect: false,
});
const ask = (...questions: unknown[]) => ({ kind: "ask_user_question", questions });
const interactive = (...questions: unknown[]) => ({ kind: "interactive_questions", questions });

function parse(body: unknown) {
  const result = CreateRequestBody.safeParse(body);
  if (!result.success) throw new Error(`refused: ${JSON.stringify(result.error.issues)}`);
  return result.data;
}

/** The dotted paths of every issue; fails when the body is accepted. */
function problems(body: unknown): string[] {
  const result = CreateRequestBody.safeParse(body);
  if (result.success) throw new Error("accepted");
  return result.error.issues.map((issue) => issue.path.join("."));
}

/** The messages of every issue. */
function messages(body: unknown): string[] {
  const result = CreateRequestBody.safeParse(body);
  if (result.success) throw new Error("accepted");
  return result.error.issues.map((issue) => issue.message);
}

describe("permission and step_gate bodies", () => {
  it("accepts a permission request as the Agent SDK sends it, keeping suggestions verbatim", () => {
    const suggestion = {
      type: "addRules",
      rules: [{ toolName: "Bash", ruleContent: "npm test:*" }],
      behavior: "allow",
      destination: "localSettings",
    };
    const body = parse({
      ...bash,
      suggestions: [suggestion],
      title: "Claude wants to run npm test",
      displayName: "Bash",
      description: "Run the tests",
      decisionReason: "not in the allow list",
      blockedPath: "/etc",
      toolUseId: "toolu_01",
      defaultToNo: true,
      suppressAlwaysAllowRule: false,
      channel: "C0123456789",
      agent: { name: "claude", sessionId: "s-1", host: "laptop", cwd: "/repo" },
      context: "*deploy* pipeline",
      timeoutSeconds: 300,
      idempotencyKey: "toolu_01",
      callbackUrl: "https://hooks.example.com/relay",
    });
    expect(body).toMatchObject({ kind: "permission", toolName: "Bash", suggestions: [suggestion] });
  });

  it("accepts a step gate with any JSON object as input", () => {
    expect(parse({ ...gate, toolUseId: "toolu_02" })).toMatchObject({ kind: "step_gate", input: { file_path: "/tmp/a.txt" } });
  });

  it("refuses an unknown kind at kind", () => {
    expect(problems({ ...bash, kind: "approval" })).toEqual(["kind"]);
    expect(problems({ toolName: "Bash", input: {} })).toEqual(["kind"]);
  });

  it.each([
    ["permission", bash],
    ["step_gate", gate],
  ])("refuses a %s with no toolName or an empty one", (_, body) => {
    const { toolName: _drop, ...rest } = body;
    expect(problems(rest)).toEqual(["toolName"]);
    expect(problems({ ...body, toolName: "" })).toEqual(["toolName"]);
  });

  it.each([
    ["an array", []],
    ["a string", "ls"],
    ["null", null],
    ["missing", undefined],
  ])("refuses input that is %s", (_, input) => {
    expect(problems({ ...bash, input })).toEqual(["input"]);
    expect(problems({ ...gate, input })).toEqual(["input"]);
  });

  it("refuses unknown top-level fields, naming them", () => {
    const result = CreateRequestBody.safeParse({ ...bash, colour: "red" });
    expect(result.success).toBe(false);
    expect(JSON.stringify(result.error?.issues)).toContain("colour");
    expect(problems({ ...gate, suggestions: [] })).toEqual([""]);
  });

  it("refuses a suggestion without a type", () => {
    expect(problems({ ...bash, suggestions: [{ rules: [] }] })).toEqual(["suggestions.0.type"]);
  });

  it("refuses a body that is not an object", () => {
    for (const value of ["permission", 3, null, [bash]]) expect(problems(value)).toEqual([""]);
  });
});

describe("common fields", () => {
  it.each([1, 60, MAX_TIMEOUT_SECONDS])("accepts timeoutSeconds %i", (timeoutSeconds) => {
    expect(parse({ ...bash, timeoutSeconds }).timeoutSeconds).toBe(timeoutSeconds);
  });

  it.each([0, -5, 1.5, MAX_TIMEOUT_SECONDS + 1, "60"])("refuses timeoutSeconds %j", (timeoutSeconds) => {
    expect(problems({ ...bash, timeoutSeconds })).toEqual(["timeoutSeconds"]);
  });

  it.each(["C0123456789", "U0ALICE01", "D0123456789", "G01234567"])("accepts the channel id %s", (channel) => {
    expect(parse({ ...bash, channel }).channel).toBe(channel);
  });

  it.each(["#general", "general", "c0123456789", "C0123", "<!channel>", ""])("refuses the channel %j", (channel) => {
    expect(problems({ ...bash, channel })).toEqual(["channel"]);
  });

  it.each(["http://127.0.0.1:8080/cb", "https://hooks.example.com/relay?x=1"])("accepts the callbackUrl %s", (callbackUrl) => {
    expect(parse({ ...bash, callbackUrl }).callbackUrl).toBe(callbackUrl);
  });

  it.each(["ftp://hooks.example.com/x", "javascript:alert(1)", "file:///etc/passwd", "hooks.example.com/relay"])(
    "refuses the callbackUrl %s as not http(s)",
    (callbackUrl) => {
      expect(problems({ ...bash, callbackUrl })).toEqual(["callbackUrl"]);
      expect(messages({ ...bash, callbackUrl })).toEqual(["must be an http(s) URL"]);
    },
  );

  it("refuses an empty idempotencyKey and an agent name that is not a string", () => {
    expect(problems({ ...bash, idempotencyKey: "" })).toEqual(["idempotencyKey"]);
    expect(problems({ ...bash, agent: { name: 42 } })).toEqual(["agent.name"]);
  });
});

describe("ask_user_question bodies", () => {
  it("accepts AskUserQuestion input as Claude sends it, filling defaults", () => {
    const body = parse(
      ask(askQuestion("Which database?", ["PostgreSQL", "SQLite"]), {
        question: "Which features?",
        options: [{ label: "Auth" }, { label: "Billing", preview: "```ts\n```" }],
        multiSelect: true,
      }),
    );
    expect(body).toEqual({
      kind: "ask_user_question",
      questions: [
        askQuestion("Which database?", ["PostgreSQL", "SQLite"]),
        {
          question: "Which features?",
          header: "",
          options: [
            { label: "Auth", description: "" },
            { label: "Billing", description: "", preview: "```ts\n```" },
          ],
          multiSelect: true,
        },
      ],
    });
  });

  it("defaults multiSelect to false", () => {
    const body = parse(ask({ question: "Which?", header: "H", options: [option("a"), option("b")] }));
    expect(body.kind === "ask_user_question" && body.questions[0]!.multiSelect).toBe(false);
  });

  it("accepts a header longer than the 12-character chip (cut for display, not refused)", () => {
    const header = "A header that is forty characters long!!";
    expect(header).toHaveLength(40);
    const body = parse(ask({ ...askQuestion("Which?"), header }));
    expect(body.kind === "ask_user_question" && body.questions[0]!.header).toBe(header);
  });

  it("accepts 4 questions of 4 options each", () => {
    const four = ["a", "b", "c", "d"];
    expect(() => parse(ask(...four.map((q) => askQuestion(`Question ${q}?`, four))))).not.toThrow();
  });

  it("refuses 0 and 5 questions at questions", () => {
    expect(problems(ask())).toEqual(["questions"]);
    expect(problems(ask(...[1, 2, 3, 4, 5].map((n) => askQuestion(`Q${n}?`))))).toEqual(["questions"]);
  });

  it("refuses 1 and 5 options at the question's options", () => {
    expect(problems(ask(askQuestion("Which?", ["only"])))).toEqual(["questions.0.options"]);
    expect(problems(ask(askQuestion("Which?", ["a", "b", "c", "d", "e"])))).toEqual(["questions.0.options"]);
  });

  it("refuses duplicate question texts at the second one", () => {
    expect(problems(ask(askQuestion("Same?"), askQuestion("Other?"), askQuestion("Same?")))).toEqual(["questions.2.question"]);
  });

  it("refuses duplicate option labels at the repeated label", () => {
    expect(problems(ask(askQuestion("Which?", ["a", "b", "a"])))).toEqual(["questions.0.options.2.label"]);
  });

  it("refuses an empty label or question text", () => {
    expect(problems(ask(askQuestion("Which?", ["a", ""])))).toEqual(["questions.0.options.1.label"]);
    expect(problems(ask(askQuestion("")))).toEqual(["questions.0.question"]);
  });
});

describe("interactive_questions bodies", () => {
  it("accepts every question type, filling required: true", () => {
    const body = parse({
      ...interactive(
        { id: "env", question: "Environment?", type: "choice", options: ["staging", "production"], default: "staging" },
        { id: "regions", question: "Regions?", type: "multiChoice", options: ["eu", "us"], default: ["eu"] },
        { id: "ticket", question: "Ticket?", type: "text", pattern: "[A-Z]+-[0-9]+", default: "OPS-1", required: false },
        { id: "go", question: "Go?", type: "confirm", default: false },
      ),
      autonomous: true,
    });
    expect(body.kind === "interactive_questions" && body.questions.map((q) => [q.id, q.required])).toEqual([
      ["env", true],
      ["regions", true],
      ["ticket", false],
      ["go", true],
    ]);
  });

  it("refuses 0 and 21 questions", () => {
    expect(problems(interactive())).toEqual(["questions"]);
    const many = Array.from({ length: 21 }, (_, i) => ({ id: `q${i}`, question: "Ok?", type: "confirm" }));
    expect(problems(interactive(...many))).toEqual(["questions"]);
  });

  it("refuses an unknown question type at type", () => {
    expect(problems(interactive({ id: "a", question: "Pick", type: "radio" }))).toEqual(["questions.0.type"]);
  });

  it("refuses duplicate ids at the repeated id", () => {
    const q = { id: "same", question: "Ok?", type: "confirm" };
    expect(problems(interactive(q, { ...q, question: "Sure?" }))).toEqual(["questions.1.id"]);
  });

  it.each(["choice", "multiChoice"])("refuses a %s question without options", (type) => {
    expect(problems(interactive({ id: "a", question: "Pick", type }))).toEqual(["questions.0.options"]);
    expect(problems(interactive({ id: "a", question: "Pick", type, options: [] }))).toEqual(["questions.0.options"]);
  });

  it.each(["text", "confirm"])("refuses options on a %s question", (type) => {
    expect(problems(interactive({ id: "a", question: "Say", type, options: ["x", "y"] }))).toEqual(["questions.0.options"]);
  });

  it("refuses duplicate options", () => {
    expect(problems(interactive({ id: "a", question: "Pick", type: "choice", options: ["x", "x"] }))).toEqual(["questions.0.options"]);
  });

  it("refuses an invalid pattern", () => {
    const body = interactive({ id: "a", question: "Ticket?", type: "text", pattern: "([A-Z]+" });
    expect(problems(body)).toEqual(["questions.0.pattern"]);
    expect(messages(body)).toEqual(["pattern is not a valid RE2 regular expression: missing closing ): `([A-Z]+`"]);
  });

  it.each([
    ["a backreference", "([A-Z])\\1", /^pattern uses a backreference/],
    ["a lookahead", "(?=OPS)[A-Z]+-[0-9]+", /^pattern uses lookaround/],
    ["a lookbehind", "(?<=-)[0-9]+", /^pattern uses lookaround/],
    ["a program too large to check quickly", ".{0,1000}", /^pattern is too large to check quickly/],
  ])("refuses a pattern with %s at its path, saying why", (_, pattern, reason) => {
    const body = interactive({ id: "a", question: "Ticket?", type: "text", pattern, default: "OPS-1" });
    expect(problems(body)).toEqual(["questions.0.pattern"]);
    expect(messages(body)).toEqual([expect.stringMatching(reason)]);
  });

  it("refuses a pattern on a question that is not text", () => {
    const body = interactive({ id: "a", question: "Pick", type: "choice", options: ["x", "y"], pattern: "x" });
    expect(problems(body)).toEqual(["questions.0.pattern"]);
  });

  it.each([
    ["a confirm default that is a string", { type: "confirm", default: "yes" }],
    ["a text default that is a boolean", { type: "text", default: true }],
    ["a choice default that is an array", { type: "choice", options: ["x", "y"], default: ["x"] }],
    ["a choice default not among the options", { type: "choice", options: ["x", "y"], default: "z" }],
    ["a multiChoice default that is a string", { type: "multiChoice", options: ["x", "y"], default: "x" }],
    ["a multiChoice default naming an unknown option", { type: "multiChoice", options: ["x", "y"], default: ["x", "z"] }],
    ["a text default that does not match the pattern", { type: "text", pattern: "[0-9]+", default: "12a" }],
  ])("refuses %s at default", (_, question) => {
    expect(problems(interactive({ id: "a", question: "Q?", ...question }))).toEqual(["questions.0.default"]);
  });

  it("reports only the pattern when the pattern is invalid and a default is given", () => {
    expect(problems(interactive({ id: "a", question: "Q?", type: "text", pattern: "(", default: "x" }))).toEqual(["questions.0.pattern"]);
  });

  it("checks the defaults of many patterns that backtrack catastrophically in RegExp at once, and correctly", () => {
    const questions = Array.from({ length: 20 }, (_, i) => ({
      id: `q${i}`,
      question: `Q${i}?`,
      type: "text",
      pattern: "(a+)+",
      default: i % 2 === 0 ? `${"a".repeat(40)}b` : "a".repeat(40),
    }));
    const started = performance.now();
    const result = CreateRequestBody.safeParse(interactive(...questions));
    expect(performance.now() - started).toBeLessThan(2000); // backtracking: 20 × 2^40 steps
    if (result.success) throw new Error("accepted");
    expect(result.error.issues.map((issue) => issue.path.join("."))).toEqual(questions.flatMap((_, i) => (i % 2 === 0 ? [`questions.${i}.default`] : [])));
    expect(result.error.issues.every((issue) => issue.message === "default does not match pattern")).toBe(true);
  });

  it("accepts a text default that matches the pattern as a whole", () => {
    expect(() => parse(interactive({ id: "a", question: "Q?", type: "text", pattern: "[0-9]+", default: "123" }))).not.toThrow();
  });

  it("refuses a non-boolean autonomous flag and unknown top-level fields", () => {
    const q = { id: "a", question: "Ok?", type: "confirm" };
    expect(problems({ ...interactive(q), autonomous: "yes" })).toEqual(["autonomous"]);
    expect(problems({ ...interactive(q), mode: "auto" })).toEqual([""]);
  });
});
