/**
 * The Slack people directory on a real WebClient, the Web API played by the
 * loopback stand-in: what it asks Slack, what it serves from its caches and for how long,
 * and that every way Slack can fail ends in DirectoryUnavailableError.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLogger } from "../../../src/logger.js";
import { DirectoryUnavailableError } from "../../../src/requests/directory.js";
import { createSlackClient } from "../../../src/slack/app.js";
import { EMAIL_MAX_AGE_MS, MEMBERS_MAX_AGE_MS, MEMBERS_REFRESH_AFTER_MS, SlackPeopleDirectory } from "../../../src/slack/directory.js";
import { ALICE, BOB, RELAY_BOT } from "../../fixtures/people.js";
import { BOT_TOKEN } from "../../helpers/slack.js";
import { SlackScript } from "../../helpers/slack-script.js";
import { startSlackWebApi } from "../../helpers/slack-web-api.js";
import { sleep } from "../../helpers/until.js";

const GROUP = "S0ONCALL1";
const EMAIL = "alice@example.com";

let api: SlackScript;
let clock: { t: number };
let logs: string[];

function directory(options: { homeTeamId?: string; callTimeoutMs?: number } = {}) {
  const logger = createLogger({ level: "debug", write: (line) => logs.push(line) });
  const client = createSlackClient({ botToken: BOT_TOKEN, apiUrl: api.url, logger });
  return new SlackPeopleDirectory({ client, logger, now: () => clock.t, ...options });
}

const members = (...users: string[]) => ({ ok: true, users });

/** Asserts that `promise` fails with DirectoryUnavailableError for `reason`. */
async function expectUnavailable(promise: Promise<unknown>, reason: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DirectoryUnavailableError);
  expect((error as DirectoryUnavailableError).reason).toBe(reason);
}

beforeEach(async () => {
  api = new SlackScript(await startSlackWebApi());
  clock = { t: 1_700_000_000_000 };
  logs = [];
});
afterEach(async () => {
  await api.standIn.close();
  expect(api.unexpected).toEqual([]);
});

describe("user group members", () => {
  it("asks Slack once and serves later reads from the cache without a call", async () => {
    api.on("usergroups.users.list", members(ALICE.id, BOB.id));
    const people = directory();
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id, BOB.id]));
    clock.t += MEMBERS_REFRESH_AFTER_MS - 1;
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id, BOB.id]));
    expect(api.calls).toEqual([{ method: "usergroups.users.list", args: { usergroup: GROUP } }]);
    api.done();
  });

  it("asks again once the entry is 60 s old, and serves the new members", async () => {
    api.on("usergroups.users.list", members(ALICE.id)).on("usergroups.users.list", members(BOB.id));
    const people = directory();
    await people.usergroupMembers(GROUP);
    clock.t += MEMBERS_MAX_AGE_MS;
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([BOB.id]));
    expect(api.callsTo("usergroups.users.list")).toHaveLength(2);
    api.done();
  });

  it("serves an entry past 45 s at once and refreshes it in the background, so the next read needs no call", async () => {
    api.on("usergroups.users.list", members(ALICE.id)).on("usergroups.users.list", members(ALICE.id, BOB.id));
    const people = directory();
    await people.usergroupMembers(GROUP);
    clock.t += MEMBERS_REFRESH_AFTER_MS;
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id]));
    await vi.waitFor(async () => expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id, BOB.id])));
    clock.t += MEMBERS_MAX_AGE_MS - MEMBERS_REFRESH_AFTER_MS;
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id, BOB.id]));
    expect(api.callsTo("usergroups.users.list")).toHaveLength(2);
    api.done();
  });

  it("asks again when the clock went back past the entry's time", async () => {
    api.on("usergroups.users.list", members(ALICE.id)).on("usergroups.users.list", members(BOB.id));
    const people = directory();
    await people.usergroupMembers(GROUP);
    clock.t -= 1;
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([BOB.id]));
    api.done();
  });

  it("lets callers arriving together share one call", async () => {
    api.on("usergroups.users.list", members(ALICE.id));
    const people = directory();
    const answers = await Promise.all([people.usergroupMembers(GROUP), people.usergroupMembers(GROUP), people.usergroupMembers(GROUP)]);
    expect(answers).toEqual([new Set([ALICE.id]), new Set([ALICE.id]), new Set([ALICE.id])]);
    expect(api.callsTo("usergroups.users.list")).toHaveLength(1);
    api.done();
  });

  it("keeps each group apart", async () => {
    api.on("usergroups.users.list", (args) => members(args.usergroup === GROUP ? ALICE.id : BOB.id), 2);
    const people = directory();
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id]));
    expect(await people.usergroupMembers("S0LEADS01")).toEqual(new Set([BOB.id]));
    api.done();
  });

  it("gives an unknown or disabled group (no_such_subteam) no members", async () => {
    api.on("usergroups.users.list", { ok: false, error: "no_such_subteam" });
    expect(await directory().usergroupMembers(GROUP)).toEqual(new Set());
    api.done();
  });

  it.each([["missing_scope"], ["invalid_auth"], ["plan_upgrade_required"], ["internal_error"]])(
    "throws DirectoryUnavailableError when Slack answers %s",
    async (error) => {
      api.on("usergroups.users.list", { ok: false, error });
      await expectUnavailable(directory().usergroupMembers(GROUP), `usergroups.users.list: ${error}`);
      api.done();
    },
  );

  it("throws DirectoryUnavailableError on an HTTP 500", async () => {
    api.on("usergroups.users.list", { status: 500 });
    await expectUnavailable(directory().usergroupMembers(GROUP), "usergroups.users.list: http_500");
    api.done();
  });

  it("throws DirectoryUnavailableError on a reply without a member list", async () => {
    api.on("usergroups.users.list", { ok: true });
    await expectUnavailable(directory().usergroupMembers(GROUP), "usergroups.users.list: unexpected reply");
    api.done();
  });

  it("on a 429 throws DirectoryUnavailableError and asks nothing more until Retry-After has passed", async () => {
    api.on("usergroups.users.list", { status: 429, headers: { "retry-after": "30" } }).on("usergroups.users.list", members(ALICE.id));
    const people = directory();
    await expectUnavailable(people.usergroupMembers(GROUP), "usergroups.users.list: ratelimited");
    clock.t += 29_999;
    await expectUnavailable(people.usergroupMembers(GROUP), "usergroups.users.list: ratelimited");
    expect(api.callsTo("usergroups.users.list")).toHaveLength(1);
    clock.t += 1;
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id]));
    api.done();
  });

  it("stops waiting after the call timeout with DirectoryUnavailableError, and a late answer still fills the cache", async () => {
    api.on("usergroups.users.list", async () => {
      await sleep(300);
      return members(ALICE.id);
    });
    const people = directory({ callTimeoutMs: 50 });
    await expectUnavailable(people.usergroupMembers(GROUP), "usergroups.users.list: no answer within 50 ms");
    await vi.waitFor(async () => expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id])));
    api.done();
  });

  it("never serves an entry 60 s old, even when Slack then fails", async () => {
    api.on("usergroups.users.list", members(ALICE.id)).on("usergroups.users.list", { ok: false, error: "internal_error" });
    const people = directory();
    await people.usergroupMembers(GROUP);
    clock.t += MEMBERS_MAX_AGE_MS;
    await expectUnavailable(people.usergroupMembers(GROUP), "usergroups.users.list: internal_error");
    api.done();
  });

  it("keeps serving the entry after failed background refreshes until it is 60 s old, and logs each failure", async () => {
    const failure = { ok: false, error: "internal_error" };
    api.on("usergroups.users.list", members(ALICE.id)).on("usergroups.users.list", failure, 3);
    const people = directory();
    const warned = () => logs.filter((line) => line.includes("refreshing a user group ahead of expiry failed")).length;
    await people.usergroupMembers(GROUP);
    clock.t += MEMBERS_REFRESH_AFTER_MS;
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id]));
    await vi.waitFor(() => expect(warned()).toBe(1));
    clock.t += MEMBERS_MAX_AGE_MS - MEMBERS_REFRESH_AFTER_MS - 1;
    expect(await people.usergroupMembers(GROUP)).toEqual(new Set([ALICE.id]));
    await vi.waitFor(() => expect(warned()).toBe(2));
    clock.t += 1;
    await expectUnavailable(people.usergroupMembers(GROUP), "usergroups.users.list: internal_error");
    api.done();
  });
});

describe("user id by email", () => {
  it("asks users.lookupByEmail and reuses a found id for ten minutes", async () => {
    api.on("users.lookupByEmail", { ok: true, user: { id: ALICE.id } }).on("users.lookupByEmail", { ok: true, user: { id: BOB.id } });
    const people = directory();
    expect(await people.userIdByEmail(EMAIL)).toBe(ALICE.id);
    clock.t += EMAIL_MAX_AGE_MS - 1;
    expect(await people.userIdByEmail("Alice@Example.com")).toBe(ALICE.id);
    expect(api.callsTo("users.lookupByEmail")).toEqual([{ method: "users.lookupByEmail", args: { email: EMAIL } }]);
    clock.t += 1;
    expect(await people.userIdByEmail(EMAIL)).toBe(BOB.id);
    api.done();
  });

  it("gives undefined when Slack knows nobody by the email, and asks again next time", async () => {
    api.on("users.lookupByEmail", { ok: false, error: "users_not_found" }, 2);
    const people = directory();
    expect(await people.userIdByEmail(EMAIL)).toBeUndefined();
    expect(await people.userIdByEmail(EMAIL)).toBeUndefined();
    api.done();
  });

  it("throws DirectoryUnavailableError when Slack fails otherwise", async () => {
    api.on("users.lookupByEmail", { ok: false, error: "missing_scope" });
    await expectUnavailable(directory().userIdByEmail(EMAIL), "users.lookupByEmail: missing_scope");
    api.done();
  });

  it("throws DirectoryUnavailableError on a 429", async () => {
    api.on("users.lookupByEmail", { status: 429, headers: { "retry-after": "1" } });
    await expectUnavailable(directory().userIdByEmail(EMAIL), "users.lookupByEmail: ratelimited");
    api.done();
  });

  it("throws DirectoryUnavailableError when the reply's user id is not a Slack user id", async () => {
    api.on("users.lookupByEmail", { ok: true, user: { id: "<!channel>" } });
    await expectUnavailable(directory().userIdByEmail(EMAIL), "users.lookupByEmail: unexpected reply");
    api.done();
  });
});

describe("the relay's team id", () => {
  it("is the seeded one, without a call", async () => {
    expect(await directory({ homeTeamId: "T0HOME001" }).homeTeamId()).toBe("T0HOME001");
    expect(api.standIn.calls).toEqual([]);
  });

  it("is asked of auth.test once, then kept", async () => {
    api.on("auth.test", { ok: true, team_id: "T0HOME001", user_id: RELAY_BOT.userId });
    const people = directory();
    expect(await people.homeTeamId()).toBe("T0HOME001");
    expect(await people.homeTeamId()).toBe("T0HOME001");
    api.done();
  });

  it("is undefined while auth.test fails, and asked again on the next call", async () => {
    api.on("auth.test", { ok: false, error: "internal_error" }).on("auth.test", { ok: true, team_id: "T0HOME001" });
    const people = directory();
    expect(await people.homeTeamId()).toBeUndefined();
    expect(await people.homeTeamId()).toBe("T0HOME001");
    api.done();
  });

  it("can be told the team id later (main asks auth.test at start)", async () => {
    const people = directory();
    people.knowHomeTeamId("T0HOME001");
    expect(await people.homeTeamId()).toBe("T0HOME001");
    expect(api.standIn.calls).toEqual([]);
  });
});
