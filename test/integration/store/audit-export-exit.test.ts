/**
 * RELAY_AUDIT_EXPORT naming a file that cannot be created stops the start;
 * the process that was refused must still exit cleanly. pino flushes each of
 * its destinations as the process exits, and one that never opened threw
 * there ("sonic boom is not ready yet"), an uncaught exception at exit.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../..");
const dir = mkdtempSync(join(tmpdir(), "relay-audit-export-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

it("a process refused an audit export file it cannot create exits with code 0 and nothing thrown at exit", { timeout: 30_000 }, async () => {
  const missing = join(dir, "no-such-directory", "audit.jsonl");
  const child = spawn(process.execPath, ["--import", "tsx", "test/fixtures/processes/audit-export-unwritable-exit.ts", missing], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const code = await new Promise<number | null>((done) => child.once("exit", (exitCode) => done(exitCode)));
  expect(stderr).toContain(`refused: RELAY_AUDIT_EXPORT: cannot append to ${missing} (ENOENT)`);
  expect(stderr).not.toContain("sonic boom");
  expect(code).toBe(0);
});
