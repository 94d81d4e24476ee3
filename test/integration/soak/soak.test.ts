/**
 * The chaos soak (bench/soak, issue 19) as CI runs it: two minutes of mixed
 * traffic and overlapping faults against two relay processes, started as
 * `npm run soak` starts them, must end with no broken promise. That the
 * same soak fails and names a broken promise planted in it is
 * planted.test.ts (a file of its own, so the two run at once); the checker's
 * rules one by one are in test/unit/bench/soak-checker.test.ts.
 */
import { describe, expect, it } from "vitest";
import { soak } from "../../helpers/soak.js";

describe("the chaos soak", () => {
  it("keeps every promise through two minutes of overlapping faults", { timeout: 600_000 }, async () => {
    const { code, output } = await soak(["--minutes", "2"]);
    expect(output).toMatch(/Chaos soak, 2 min, seed \d+: \d+ requests/);
    // Every fault ran, each kind of question was asked, and the verdict is clean.
    for (const fault of ["redis-restart", "sigkill", "sigterm-roll", "slack-429", "slack-5xx"]) expect(output).toContain(`× ${fault}`);
    for (const kind of [
      "permission, long-poll",
      "permission, callback",
      "step_gate, hook",
      "ask_user_question, long-poll",
      "interactive_questions, callback",
    ]) {
      expect(output).toContain(`| ${kind} (`);
    }
    // At least one relay process lived long enough for its memory and descriptors to be judged.
    expect(output).toMatch(/- relay [ab]#\d+ \(\d/);
    expect(output, output).toContain("- violations: none");
    expect(code, output).toBe(0);
  });
});
