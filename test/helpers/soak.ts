/**
 * Runs the chaos soak (bench/soak/run.ts) as `npm run soak` runs it, in a
 * process of its own, for test/integration/soak: each of its files runs one
 * soak, so two soaks run on two workers at once.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Runs the soak with `args`; resolves with its exit code and everything it printed. */
export function soak(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "bench/soak/run.ts", ...args], { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, output }));
  });
}
