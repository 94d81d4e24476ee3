/**
 * `approval-relay audit` spawned against the relay stand-in: jsonl and csv
 * output, paging with `after`, --since / --request-id / --limit on the wire,
 * and exit code 3 with a message for every error (bad arguments, a refusal,
 * an unreachable relay, a reply that is not the API's).
 */
import { describe } from "vitest";
import { CONCURRENT_CLI_TIMEOUT_MS, cliTest as it, runCli } from "../../helpers/cli.js";
import { error, type RelayStandIn, type StandInAuditEvent } from "../../helpers/relay-stand-in.js";
import { ALICE } from "../../fixtures/people.js";

const T0 = Date.parse("2026-12-01T09:00:00Z");

function event(i: number, over: Partial<StandInAuditEvent> = {}): StandInAuditEvent {
  return { id: `${T0 + i}-0`, at: new Date(T0 + i).toISOString(), type: "created", requestId: `req-${i}`, token: "ci-bot", ...over };
}

function fill(relay: RelayStandIn, count: number): StandInAuditEvent[] {
  relay.auditEvents = Array.from({ length: count }, (_, i) => event(i));
  return relay.auditEvents;
}

const auditCalls = (relay: RelayStandIn) => relay.callsTo("GET", "/v1/audit");
const lines = (text: string) => text.split("\n").filter(Boolean);

describe.concurrent("approval-relay audit", { timeout: CONCURRENT_CLI_TIMEOUT_MS }, () => {
  it("prints every event as one JSON line, oldest first, reading with the token from RELAY_TOKEN", async ({ relay, env, expect }) => {
    const events = fill(relay, 3);
    events[1] = event(1, { type: "answered", person: ALICE, status: "answered", reason: "allowed" });
    const result = await runCli(["audit"], { env });
    expect(result).toMatchObject({ code: 0, stderr: "" });
    expect(lines(result.stdout).map((line) => JSON.parse(line) as unknown)).toStrictEqual(events);
    const [call] = auditCalls(relay);
    expect(call!.headers.authorization).toBe(`Bearer ${env.RELAY_TOKEN}`);
    expect(Object.fromEntries(call!.query)).toStrictEqual({ limit: "1000" });
  });

  it("writes a bidi override in an event as a \\u escape in jsonl: the line reads as written and parses back to the same event", async ({
    relay,
    env,
    expect,
  }) => {
    relay.auditEvents = [event(0, { type: "refused", reason: "echo cleanup \u202E; rm -rf ~ #" })];
    const result = await runCli(["audit"], { env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("echo cleanup \\u202e; rm -rf ~ #");
    expect(result.stdout).not.toContain("\u202E");
    expect(JSON.parse(lines(result.stdout)[0]!)).toStrictEqual(relay.auditEvents[0]);
  });

  it("says on stderr, after the events, how many the log's cap kept out, when and why", async ({ relay, env, expect }) => {
    const events = fill(relay, 2);
    relay.auditDropped = {
      events: 22,
      from: "2026-12-01T09:00:01.000Z",
      to: "2026-12-01T09:05:00.000Z",
      reason: "the audit log was at RELAY_AUDIT_MAX_EVENTS",
    };
    const result = await runCli(["audit"], { env });
    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toHaveLength(events.length);
    expect(result.stderr).toBe(
      "approval-relay audit: 22 events were not recorded from 2026-12-01T09:00:01.000Z to 2026-12-01T09:05:00.000Z: the audit log was at RELAY_AUDIT_MAX_EVENTS\n",
    );
  });

  it("pages through a long log with the `next` cursor, printing each event once", async ({ relay, env, expect }) => {
    const events = fill(relay, 2500);
    const result = await runCli(["audit"], { env });
    expect(result.code).toBe(0);
    expect(lines(result.stdout).map((line) => (JSON.parse(line) as StandInAuditEvent).id)).toStrictEqual(events.map((e) => e.id));
    expect(auditCalls(relay).map((c) => c.query.get("after"))).toStrictEqual([null, events[999]!.id, events[1999]!.id]);
  });

  it("--limit prints at most that many events, asking for no more than it needs", async ({ relay, env, expect }) => {
    fill(relay, 2500);
    const result = await runCli(["audit", "--limit", "1200"], { env });
    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toHaveLength(1200);
    expect(auditCalls(relay).map((c) => c.query.get("limit"))).toStrictEqual(["1000", "200"]);
  });

  it("--since 24h asks for the events of the last day; --request-id for one request's", async ({ relay, env, expect }) => {
    const now = Date.now();
    const at = (ms: number) => new Date(ms).toISOString();
    relay.auditEvents = [
      event(0, { at: at(now - 48 * 3_600_000), requestId: "req-1" }),
      event(1, { at: at(now - 3_600_000), requestId: "req-2" }),
      event(2, { at: at(now - 3_600_000), requestId: "req-1", type: "answered" }),
    ];
    const result = await runCli(["audit", "--since", "24h", "--request-id", "req-1"], { env });
    expect(result.code).toBe(0);
    expect(lines(result.stdout).map((line) => (JSON.parse(line) as StandInAuditEvent).id)).toStrictEqual([`${T0 + 2}-0`]);
    const query = auditCalls(relay)[0]!.query;
    const since = Date.parse(query.get("since")!);
    expect(since).toBeGreaterThanOrEqual(now - 86_400_000 - 1000);
    expect(since).toBeLessThanOrEqual(Date.now() - 86_400_000);
    expect(query.get("since")).toMatch(/Z$/);
    expect(query.get("requestId")).toBe("req-1");
  });

  it("--since takes an ISO 8601 time and sends it in UTC", async ({ relay, env, expect }) => {
    fill(relay, 3);
    const result = await runCli(["audit", "--since", "2026-12-01T10:00:00+01:00", "--request-id", "req-2"], { env });
    expect(result.code).toBe(0);
    expect(lines(result.stdout).map((line) => (JSON.parse(line) as StandInAuditEvent).id)).toStrictEqual([`${T0 + 2}-0`]);
    expect(auditCalls(relay)[0]!.query.get("since")).toBe("2026-12-01T09:00:00.000Z");
  });

  it("--format csv prints a header and one row per event in fixed columns, quoting and defusing what needs it", async ({ relay, env, expect }) => {
    relay.auditEvents = [
      event(0, { kind: "permission", channel: "C0123456789" }),
      event(1, {
        type: "refused",
        token: undefined,
        person: { id: "U0MALLORY", name: 'Mallory "M", Jr.' },
        reason: '=HYPERLINK("https://evil.example")\nnot an approver',
      }),
      event(2, { type: "approval", approvals: { count: 1, quorum: 2 }, route: "routes.0", status: "pending" }),
    ];
    const result = await runCli(["audit", "--format", "csv"], { env });
    expect(result.code).toBe(0);
    expect(result.stdout.split("\r\n")).toStrictEqual([
      "id,at,type,requestId,token,kind,route,channel,personId,personName,status,approvals,quorum,reason",
      `${T0}-0,2026-12-01T09:00:00.000Z,created,req-0,ci-bot,permission,,C0123456789,,,,,,`,
      `${T0 + 1}-0,2026-12-01T09:00:00.001Z,refused,req-1,,,,,U0MALLORY,"Mallory ""M"", Jr.",,,,"'=HYPERLINK(""https://evil.example"")\nnot an approver"`,
      `${T0 + 2}-0,2026-12-01T09:00:00.002Z,approval,req-2,ci-bot,,routes.0,,,,pending,1,2,`,
      "",
    ]);
  });

  it("--format csv with no events prints the header alone", async ({ env, expect }) => {
    const result = await runCli(["audit", "--format", "csv"], { env });
    expect(result).toMatchObject({ code: 0, stdout: "id,at,type,requestId,token,kind,route,channel,personId,personName,status,approvals,quorum,reason\r\n" });
  });

  it("a refusal (an agent token: 403) exits 3 with the relay's message and prints nothing", async ({ relay, env, expect }) => {
    relay.fault = () => error(403, "relay_forbidden", "This route takes an admin token (RELAY_ADMIN_TOKENS); agent tokens may not read the audit.");
    const result = await runCli(["audit", "--format", "csv"], { env });
    expect(result).toMatchObject({ code: 3, stdout: "" });
    expect(result.stderr).toBe(
      "approval-relay audit: the relay refused the request: This route takes an admin token (RELAY_ADMIN_TOKENS); agent tokens may not read the audit. (HTTP 403)\n",
    );
    expect(auditCalls(relay)).toHaveLength(1);
  });

  it("a failure after the first page exits 3; the events already printed stay printed", async ({ relay, env, expect }) => {
    fill(relay, 1500);
    relay.fault = (call) => (call.query.has("after") ? error(401, "relay_unauthorized", "Send a relay token.") : undefined);
    const result = await runCli(["audit"], { env });
    expect(result.code).toBe(3);
    expect(lines(result.stdout)).toHaveLength(1000);
    expect(result.stderr).toContain("Send a relay token.");
  });

  it("retries a 503 and goes on", async ({ relay, env, expect }) => {
    fill(relay, 2);
    let failures = 1;
    relay.fault = () => (failures-- > 0 ? { ...error(503, "relay_store_unavailable", "storage away"), headers: { "retry-after": "0" } } : undefined);
    const result = await runCli(["audit"], { env });
    expect(result.code).toBe(0);
    expect(lines(result.stdout)).toHaveLength(2);
    expect(auditCalls(relay)).toHaveLength(2);
  });

  it("an unreachable relay exits 3 after RELAY_RETRIES, saying it could not be reached", async ({ env, expect }) => {
    const result = await runCli(["audit"], { env: { ...env, RELAY_URL: "http://127.0.0.1:1" } });
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/^approval-relay audit: the relay could not be reached: /);
  });

  it("a reply that is not the API's exits 3, saying so", async ({ relay, env, expect }) => {
    relay.fault = () => ({ status: 200, json: { events: [{ id: 1 }] } });
    const result = await runCli(["audit"], { env });
    expect(result).toMatchObject({ code: 3, stdout: "" });
    expect(result.stderr).toContain("not the JSON the API promises");
  });

  it.for([
    [["--format", "xml"], "--format must be jsonl or csv"],
    [["--since", "yesterday"], "--since must be a duration such as 30m, 24h or 7d"],
    [["--since", "24x"], "--since must be a duration"],
    [["--limit", "0"], "--limit must be a whole number of events"],
    [["--limit", "ten"], "--limit must be a whole number of events"],
    [["--request-id", ""], "--request-id must be a request id"],
    [["--sinse", "24h"], "Unknown option '--sinse'"],
    [["extra"], "Unexpected argument 'extra'"],
  ] as Array<[string[], string]>)("%j exits 3 with the problem and the usage, calling nobody", async ([args, problem], { relay, env, expect }) => {
    const result = await runCli(["audit", ...args], { env });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`approval-relay audit: `);
    expect(result.stderr).toContain(problem);
    expect(result.stderr).toContain("Usage: approval-relay");
    expect(auditCalls(relay)).toHaveLength(0);
  });

  it("without RELAY_TOKEN, exits 3 asking for an admin token", async ({ env, expect }) => {
    const result = await runCli(["audit"], { env: { RELAY_URL: env.RELAY_URL! } });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("RELAY_TOKEN is not set: pass --token or set RELAY_TOKEN to an admin token from RELAY_ADMIN_TOKENS");
  });
});
