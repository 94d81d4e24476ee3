import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RelayClient } from "../../../src/client/index.js";
import { localRelayPath, readLocalRelay, writeLocalRelay } from "../../../src/protocol/local-relay.js";

const CARD = { url: "http://127.0.0.1:3000", token: "0123456789abcdef0123456789abcdef" };
let stateHome: string;
beforeEach(() => {
  stateHome = mkdtempSync(join(tmpdir(), "local-relay-"));
});
afterEach(() => rmSync(stateHome, { recursive: true, force: true }));

describe("the local relay's file", () => {
  it("lives under XDG_STATE_HOME when it is absolute, else under ~/.local/state", () => {
    expect(localRelayPath("/x/state")).toBe("/x/state/slack-approval-relay/local.json");
    expect(localRelayPath(undefined)).toBe(join(homedir(), ".local/state/slack-approval-relay/local.json"));
    expect(localRelayPath("relative/state")).toBe(join(homedir(), ".local/state/slack-approval-relay/local.json"));
  });

  it("is written readable by the user alone, even over an older file that others could read", () => {
    mkdirSync(join(stateHome, "slack-approval-relay"), { mode: 0o755 });
    writeFileSync(localRelayPath(stateHome), "{}", { mode: 0o644 });
    chmodSync(localRelayPath(stateHome), 0o644);
    writeLocalRelay(CARD, stateHome);
    expect(statSync(localRelayPath(stateHome)).mode & 0o777).toBe(0o600);
    expect(statSync(join(stateHome, "slack-approval-relay")).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(localRelayPath(stateHome), "utf8"))).toEqual(CARD);
    expect(readLocalRelay(stateHome)).toEqual(CARD);
  });

  it("reads as none when missing, not JSON, or not a loopback relay's", () => {
    expect(readLocalRelay(stateHome)).toBeUndefined();
    mkdirSync(join(stateHome, "slack-approval-relay"));
    writeFileSync(localRelayPath(stateHome), "not json");
    expect(readLocalRelay(stateHome)).toBeUndefined();
    writeFileSync(localRelayPath(stateHome), JSON.stringify({ ...CARD, url: "http://evil.example.com:3000" }));
    expect(readLocalRelay(stateHome)).toBeUndefined();
  });
});

describe("RelayClient's defaults", () => {
  it("with neither url nor token, uses the local relay's file", async () => {
    writeLocalRelay(CARD, stateHome);
    const calls: Array<{ url: string; auth: string | null }> = [];
    const client = new RelayClient({
      stateHome,
      retries: 0,
      fetch: async (url, init) => {
        calls.push({ url, auth: new Headers(init.headers).get("authorization") });
        return new Response(
          JSON.stringify({ id: "r1", kind: "step_gate", status: "pending", createdAt: "2026-01-01T00:00:00.000Z", expiresAt: "2026-01-01T00:10:00.000Z" }),
          {
            headers: { "content-type": "application/json" },
          },
        );
      },
    });
    await client.get("r1");
    expect(calls).toEqual([{ url: "http://127.0.0.1:3000/v1/requests/r1", auth: `Bearer ${CARD.token}` }]);
  });

  it("with neither and no file, says to give them or start a local relay", () => {
    expect(() => new RelayClient({ stateHome })).toThrow(/give url and token, or start a relay on this machine/);
  });
});
