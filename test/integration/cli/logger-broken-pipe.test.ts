/**
 * The relay's process exits when whoever read its log has gone (a closed
 * terminal, `npm start | head`, a log shipper that died, a test runner that
 * stopped reading). pino flushes what is left synchronously as the process
 * exits; a write refused with EPIPE must end that flush, not retry it every
 * 100 ms for ever with the main thread blocked, signals unanswered.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { expect, it } from "vitest";
import { until } from "../../helpers/until.js";

const ROOT = resolve(import.meta.dirname, "../../..");

it("a process whose log reader has gone still exits, lines pending and all", { timeout: 30_000 }, async () => {
  const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/processes/log-then-exit.ts"], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<number | null>((done) => child.once("exit", (code) => done(code)));
  try {
    await until(() => stderr.includes("logged"), 15_000, "the process to start logging");
    // The reader leaves: every later write to stdout is refused with EPIPE.
    child.stdout!.destroy();
    child.stdin!.write("go\n");
    const code = await Promise.race([exited, new Promise<"hung">((done) => setTimeout(() => done("hung"), 10_000))]);
    expect(code).toBe(0);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
  }
});
