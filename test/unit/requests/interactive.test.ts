/**
 * InteractiveQuestion rules (docs/architecture.md §2 "interactive_questions"): which
 * questions reach a person, what autonomous mode answers by itself, and how
 * submitted values are checked and completed with defaults.
 */
import type { z } from "zod";
import { describe, expect, it } from "vitest";
import { autonomousAnswers, questionsForPerson, resolveInteractiveAnswers } from "../../../src/requests/interactive.js";
import { InteractiveQuestionsBody } from "../../../src/protocol/request-body.js";

type QuestionInput = z.input<typeof InteractiveQuestionsBody>["questions"][number];

const body = (questions: QuestionInput[], autonomous?: boolean) =>
  InteractiveQuestionsBody.parse({ kind: "interactive_questions", questions, ...(autonomous === undefined ? {} : { autonomous }) });

const env: QuestionInput = { id: "env", question: "Environment?", type: "choice", options: ["staging", "production"] };
const regions: QuestionInput = { id: "regions", question: "Regions?", type: "multiChoice", options: ["eu", "us", "ap"] };
const ticket: QuestionInput = { id: "ticket", question: "Ticket?", type: "text", pattern: "[A-Z]+-[0-9]+" };
const notes: QuestionInput = { id: "notes", question: "Notes?", type: "text", required: false };
const go: QuestionInput = { id: "go", question: "Deploy now?", type: "confirm" };

const ids = (questions: Array<{ id: string }>) => questions.map((q) => q.id);

describe("questionsForPerson", () => {
  it("shows every question when not autonomous, defaults or not", () => {
    const b = body([{ ...env, default: "staging" }, notes, go]);
    expect(ids(questionsForPerson(b))).toEqual(["env", "notes", "go"]);
    expect(ids(questionsForPerson(body([{ ...env, default: "staging" }, notes, go], false)))).toEqual(["env", "notes", "go"]);
  });

  it("in autonomous mode shows only the required questions that have no default", () => {
    const b = body([{ ...env, default: "staging" }, notes, go, { ...ticket, required: false, default: "OPS-1" }, regions], true);
    expect(ids(questionsForPerson(b))).toEqual(["go", "regions"]);
  });

  it("in autonomous mode shows nothing when every question has a default or is optional", () => {
    expect(questionsForPerson(body([{ ...go, default: true }, notes], true))).toEqual([]);
  });
});

describe("autonomousAnswers", () => {
  it("answers every question that has a default with it, of each type", () => {
    const b = body(
      [{ ...env, default: "production" }, { ...regions, default: ["eu", "us"] }, { ...ticket, default: "OPS-7" }, { ...go, default: false }, notes],
      true,
    );
    expect(autonomousAnswers(b)).toEqual({ env: "production", regions: ["eu", "us"], ticket: "OPS-7", go: false });
  });

  it("leaves out optional questions with no default", () => {
    expect(autonomousAnswers(body([notes, { ...go, default: true }], true))).toEqual({ go: true });
  });
});

describe("resolveInteractiveAnswers", () => {
  it("accepts a valid answer of every type", () => {
    const b = body([env, regions, ticket, go]);
    const result = resolveInteractiveAnswers(b, { env: "production", regions: ["eu", "ap"], ticket: "OPS-42", go: true });
    expect(result).toEqual({ ok: true, decision: { answers: { env: "production", regions: ["eu", "ap"], ticket: "OPS-42", go: true } } });
  });

  it("takes No (false) on a confirm question as an answer, not as a missing one", () => {
    expect(resolveInteractiveAnswers(body([go]), { go: false })).toEqual({ ok: true, decision: { answers: { go: false } } });
  });

  it("asks for an answer to each required question left unanswered or answered empty", () => {
    const result = resolveInteractiveAnswers(body([env, regions, ticket, go]), { env: "", regions: [], ticket: "   " });
    expect(result).toEqual({
      ok: false,
      errors: {
        env: "This question needs an answer.",
        regions: "This question needs an answer.",
        ticket: "This question needs an answer.",
        go: "This question needs an answer.",
      },
    });
  });

  it("leaves out an optional question with no default when it is not answered", () => {
    expect(resolveInteractiveAnswers(body([notes, go]), { notes: "", go: true })).toEqual({
      ok: true,
      decision: { answers: { go: true } },
    });
  });

  it("fills an omitted or empty answer with the question's default, required or not", () => {
    const b = body([
      { ...env, default: "staging" },
      { ...regions, default: ["eu"] },
      { ...notes, default: "none" },
      { ...go, default: true },
    ]);
    expect(resolveInteractiveAnswers(b, { env: "", regions: [] })).toEqual({
      ok: true,
      decision: { answers: { env: "staging", regions: ["eu"], notes: "none", go: true } },
    });
  });

  it("prefers what the person answered over the default", () => {
    const b = body([
      { ...env, default: "staging" },
      { ...go, default: true },
    ]);
    expect(resolveInteractiveAnswers(b, { env: "production", go: false })).toEqual({
      ok: true,
      decision: { answers: { env: "production", go: false } },
    });
  });

  it("refuses a choice that is not among the options", () => {
    expect(resolveInteractiveAnswers(body([env]), { env: "qa" })).toEqual({ ok: false, errors: { env: "Choose one of the options." } });
  });

  it("refuses a multiChoice selection naming any option not in the list", () => {
    expect(resolveInteractiveAnswers(body([regions]), { regions: ["eu", "mars"] })).toEqual({
      ok: false,
      errors: { regions: "Choose among the options." },
    });
  });

  it("refuses values of the wrong type for each question type", () => {
    const result = resolveInteractiveAnswers(body([env, regions, ticket, go]), {
      env: ["staging"],
      regions: "eu",
      ticket: true,
      go: "yes",
    });
    expect(result).toEqual({
      ok: false,
      errors: {
        env: "Choose one of the options.",
        regions: "Choose among the options.",
        ticket: "Type an answer.",
        go: "Choose Yes or No.",
      },
    });
  });

  it("refuses text that does not match the pattern as a whole, showing the format", () => {
    const b = body([ticket]);
    expect(resolveInteractiveAnswers(b, { ticket: "see OPS-42" })).toEqual({
      ok: false,
      errors: { ticket: "The answer must match the format [A-Z]+-[0-9]+" },
    });
    expect(resolveInteractiveAnswers(b, { ticket: "OPS-42" })).toEqual({ ok: true, decision: { answers: { ticket: "OPS-42" } } });
  });

  it("checks every answer of a submission whose patterns backtrack catastrophically in RegExp, at once", () => {
    const questions = Array.from({ length: 20 }, (_, i) => ({ id: `q${i}`, question: `Value ${i}?`, type: "text" as const, pattern: "(a+)+" }));
    const submitted = Object.fromEntries(questions.map((q, i) => [q.id, i === 0 ? `${"a".repeat(40)}b` : "a".repeat(40)]));
    const started = performance.now();
    const result = resolveInteractiveAnswers(body(questions), submitted);
    expect(performance.now() - started).toBeLessThan(2000); // backtracking: 2^40 steps
    expect(result).toEqual({ ok: false, errors: { q0: "The answer must match the format (a+)+" } });
  });

  it("accepts any text when the question has no pattern", () => {
    expect(resolveInteractiveAnswers(body([notes]), { notes: "<!channel> anything" })).toEqual({
      ok: true,
      decision: { answers: { notes: "<!channel> anything" } },
    });
  });

  it("collects one error per question and records nothing when any answer is invalid", () => {
    const result = resolveInteractiveAnswers(body([env, go, ticket]), { env: "production", go: "maybe", ticket: "x" });
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : Object.keys(result.errors)).toEqual(["go", "ticket"]);
  });

  it("in autonomous mode fills defaults for hidden questions and checks only the shown ones", () => {
    const b = body([{ ...env, default: "staging" }, notes, go], true);
    expect(resolveInteractiveAnswers(b, { go: true })).toEqual({ ok: true, decision: { answers: { env: "staging", go: true } } });
    expect(resolveInteractiveAnswers(b, {})).toEqual({ ok: false, errors: { go: "This question needs an answer." } });
  });

  it("in autonomous mode ignores values submitted for questions the person was not shown", () => {
    const b = body([{ ...env, default: "staging" }, notes, go], true);
    expect(resolveInteractiveAnswers(b, { env: "production", notes: "sneaky", go: false })).toEqual({
      ok: true,
      decision: { answers: { env: "staging", go: false } },
    });
  });

  it("ignores submitted values for ids the request does not have", () => {
    expect(resolveInteractiveAnswers(body([go]), { go: true, extra: "x" })).toEqual({ ok: true, decision: { answers: { go: true } } });
  });
});
