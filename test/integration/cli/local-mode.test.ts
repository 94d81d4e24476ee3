/**
 * Local mode, spawned for real: `approval-relay serve` (what `npm start`
 * runs) with no Slack settings at all starts without Slack on 127.0.0.1,
 * makes an agent token, writes `{url, token}` readable by the user alone to
 * the state directory, and `approval-relay ask` finds the relay through that
 * file with neither RELAY_URL nor RELAY_TOKEN set.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { networkInterfaces, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli, startCli, type CliRun } from "../../helpers/cli.js";
import { freePort } from "../../helpers/ports.js";
import { until } from "../../helpers/until.js";

let stateHome: string;
let relay: CliRun | undefined;
beforeEach(() => {
  stateHome = mkdtempSync(join(tmpdir(), "relay-state-"));
});
afterEach(async () => {
  if (relay && relay.child.exitCode === null) {
    relay.child.kill("SIGTERM");
    await relay.done;
  }
  relay = undefined;
  rmSync(stateHome, { recursive: true, force: true });
});

/** Starts `serve` with no Slack variable; resolves once /healthz answers on 127.0.0.1. */
async function startLocal(env: Record<string, string> = {}): Promise<{ url: string; output: () => string }> {
  const port = await freePort();
  relay = startCli(["serve"], { whole: true, env: { PORT: String(port), XDG_STATE_HOME: stateHome, RELAY_SHUTDOWN_GRACE: "0", ...env } });
  let output = "";
  relay.child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  relay.child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const url = `http://127.0.0.1:${port}`;
  await until(
    () =>
      fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      ),
    20_000,
    "local relay /healthz",
  );
  await until(() => output.includes("local mode"), 5_000, "the start line");
  return { url, output: () => output };
}

const cardPath = () => join(stateHome, "slack-approval-relay", "local.json");

describe("local mode: approval-relay serve without Slack", () => {
  it("starts on 127.0.0.1, writes {url, token} with mode 0600, says how to connect Slack, and is ready without Slack", async () => {
    const { url, output } = await startLocal();
    const card = JSON.parse(readFileSync(cardPath(), "utf8")) as { url: string; token: string };
    expect(card).toEqual({ url, token: expect.stringMatching(/^[0-9a-f]{48}$/) });
    expect(statSync(cardPath()).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateHome, "slack-approval-relay")).mode & 0o777).toBe(0o700);
    const startLines = output()
      .split("\n")
      .filter((line) => line.includes("local mode"));
    expect(startLines).toHaveLength(1);
    expect(startLines[0]).toContain(cardPath());
    expect(startLines[0]).toContain("SLACK_BOT_TOKEN");
    expect(output()).not.toContain(card.token);
    const ready = await fetch(`${url}/readyz`);
    expect(ready.status).toBe(200);
    // The token it made is an agent token of this relay.
    const listed = await fetch(`${url}/v1/requests/nope`, { headers: { authorization: `Bearer ${card.token}` } });
    expect(listed.status).toBe(404);
  });

  it("listens on the loopback interface only", async () => {
    const { url } = await startLocal();
    const port = new URL(url).port;
    const outside = Object.values(networkInterfaces())
      .flat()
      .find((address) => address && !address.internal && address.family === "IPv4");
    // A machine with no other interface has nothing else to reach it on.
    if (outside) {
      const reached = await fetch(`http://${outside.address}:${port}/healthz`).then(
        () => true,
        () => false,
      );
      expect(reached).toBe(false);
    }
    const ipv6 = await fetch(`http://[::1]:${port}/healthz`).then(
      () => true,
      () => false,
    );
    expect(ipv6).toBe(false);
  });

  it("approval-relay ask, with neither RELAY_URL nor RELAY_TOKEN, finds the local relay through the file", async () => {
    await startLocal();
    const result = await runCli(["ask", "Deploy v1.2.3?", "--timeout", "1"], { env: { XDG_STATE_HOME: stateHome } });
    // Nobody answers in the console: the request the relay took expires (exit 2), which only a relay that took it can say.
    expect(result).toMatchObject({ code: 2 });
  });

  it("with RELAY_TOKENS set, uses them and writes no file", async () => {
    const { url } = await startLocal({ RELAY_TOKENS: "ci:tok_local_0123456789abcdef" });
    expect(() => statSync(cardPath())).toThrow();
    const created = await fetch(`${url}/v1/requests`, {
      method: "POST",
      headers: { authorization: "Bearer tok_local_0123456789abcdef", "content-type": "application/json" },
      body: JSON.stringify({ kind: "step_gate", toolName: "Bash", input: { command: "ls" } }),
    });
    expect(created.status).toBe(201);
  });

  it("approval-relay ask without a local relay says how to start one", async () => {
    const result = await runCli(["ask", "Deploy?"], { env: { XDG_STATE_HOME: stateHome } });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("RELAY_URL is not set");
    expect(result.stderr).toContain("npm start");
  });
});
