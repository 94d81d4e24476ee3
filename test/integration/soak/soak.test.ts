/**
 * The chaos soak (bench/soak, issue 19) as CI runs it: two minutes of mixed
 * traffic and overlapping faults against two relay processes, started as
 * `npm run soak` starts them, must end with no broken promise; and the same
 * soak with a planted bug (the callback receiver loses a callback, as a relay
 * that never sent it would look) must fail and name it. The checker's rules
 * one by one are in test/unit/bench/soak-checker.test.ts.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../..", import.meta.url));

/** Runs the soak with `args`; resolves with its exit code and everything it printed. */
function soak(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/soak/run.ts", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}

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

  it("fails, naming the request, when a callback is lost", { timeout: 420_000 }, async () => {
    const { code, output } = await soak(["--minutes", "0.5", "--plant", "drop-callback"]);
    expect(output, output).toMatch(/callback soak-[0-9a-f-]+: no callback arrived for /);
    expect(code, output).toBe(1);
  });
});
