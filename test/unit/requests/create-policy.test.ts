/**
 * The policy a new request is created under (docs/architecture.md §7): the matched
 * route's keys over the default route's, narrowed by the request's own
 * `approvers` and `quorum` (never widened: each wider ask is a 400 naming
 * the field), and `requestedBy` resolved to a Slack user id. Lookups go to
 * a plain-object PeopleDirectory; a lookup Slack cannot answer, or one
 * without a directory, is 503 relay_slack_unavailable, and bad input is
 * found before any lookup.
 */
import { describe, expect, it } from "vitest";
import { statusOf } from "../../../src/http/errors.js";
import { Route } from "../../../src/requests/route-schema.js";
import { createPolicy } from "../../../src/requests/create-policy.js";
import { DirectoryUnavailableError, type PeopleDirectory } from "../../../src/requests/directory.js";
import { RelayError } from "../../../src/requests/errors.js";
import type { RequestPolicy } from "../../../src/requests/model.js";
import { matchRoute } from "../../../src/requests/routes.js";
import { ALICE, BOB, CAROL } from "../../fixtures/people.js";
import { bodyOf } from "../../helpers/service-harness.js";

const ONCALL = "S0ONCALL01";
const LEADS = "S0LEADS001";

/** A directory that knows `members` of each group and `emails`; every call is recorded. */
function peopleDirectory(members: Record<string, string[]> = {}, emails: Record<string, string> = {}): PeopleDirectory & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    usergroupMembers: async (group) => {
      calls.push(`usergroupMembers ${group}`);
      return new Set(members[group] ?? []);
    },
    userIdByEmail: async (email) => {
      calls.push(`userIdByEmail ${email}`);
      return emails[email];
    },
    homeTeamId: async () => "T0HOME0001",
  };
}

/** A directory whose every call fails as when Slack does not answer. */
const unavailable: PeopleDirectory = {
  usergroupMembers: () => Promise.reject(new DirectoryUnavailableError("timed out")),
  userIdByEmail: () => Promise.reject(new DirectoryUnavailableError("timed out")),
  homeTeamId: async () => undefined,
};

interface Setup {
  routes?: Array<Record<string, unknown>>;
  defaults?: RequestPolicy;
  directory?: PeopleDirectory;
}

function policyFor(fields: Record<string, unknown>, { routes = [], defaults = { alwaysAllow: "tool" }, directory }: Setup = {}): Promise<RequestPolicy> {
  const body = bodyOf(fields);
  const matched = matchRoute(
    routes.map((route) => Route.parse(route)),
    { tokenName: "deploy-bot", body },
  );
  return createPolicy({ body, matched, defaults, ...(directory ? { directory } : {}) });
}

async function refusal(creating: Promise<unknown>): Promise<{ code: string; status: number; details: unknown }> {
  const error = await creating.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(RelayError);
  const { code, details } = error as RelayError;
  // The domain says what went wrong; the status is the one the HTTP layer gives that code.
  return { code, status: statusOf(code), details };
}

const problemAt = (path: string, message: string | RegExp) => ({
  code: "relay_invalid_request",
  status: 400,
  details: [{ path, message: typeof message === "string" ? message : expect.stringMatching(message) }],
});

const question = { kind: "ask_user_question", questions: [{ question: "Which?", options: [{ label: "a" }, { label: "b" }] }] };
const yesNo = { kind: "interactive_questions", questions: [{ id: "answer", question: "Deploy?", type: "confirm" }] };
const prodRoute = { match: { labels: { env: "prod" } }, approvers: { users: [ALICE.id, BOB.id], usergroups: [ONCALL] }, quorum: 2 };
const prod = { labels: { env: "prod" } };
const groupRoute = { match: {}, approvers: { users: [ALICE.id], usergroups: [ONCALL] } };

describe("the route's policy", () => {
  it("without routes or policy keys: anyone answers, once, and the record names the default route", async () => {
    expect(await policyFor({})).toEqual({ alwaysAllow: "tool", route: "default" });
  });

  it("a request no route matches takes the default route's keys", async () => {
    const defaults: RequestPolicy = {
      alwaysAllow: "all",
      approvers: { users: [ALICE.id] },
      quorum: 1,
      selfApproval: "deny",
      reminders: [60],
      escalate: [{ after: 120, usergroups: [LEADS] }],
    };
    expect(await policyFor({}, { defaults })).toEqual({
      alwaysAllow: "all",
      route: "default",
      approvers: { users: [ALICE.id] },
      selfApproval: "deny",
      reminders: [60],
      escalate: [{ after: 120, usergroups: [LEADS] }],
    });
  });

  it("a route's own keys replace the default route's one by one", async () => {
    const defaults: RequestPolicy = { alwaysAllow: "tool", approvers: { users: [ALICE.id, BOB.id] }, selfApproval: "deny", reminders: [60] };
    const routes = [{ match: {}, quorum: 2, reminders: [300, 900], alwaysAllow: "all" }];
    expect(await policyFor({}, { routes, defaults })).toEqual({
      alwaysAllow: "all",
      route: "routes.0",
      approvers: { users: [ALICE.id, BOB.id] },
      quorum: 2,
      selfApproval: "deny",
      reminders: [300, 900],
    });
  });

  it("a route's approvers: any lets anyone answer whatever the default route lists", async () => {
    const defaults: RequestPolicy = { alwaysAllow: "tool", approvers: { users: [ALICE.id] } };
    expect(await policyFor({}, { routes: [{ match: {}, approvers: "any" }], defaults })).toEqual({ alwaysAllow: "tool", route: "routes.0" });
  });

  it("leaves out selfApproval allow (a route's allow over the default's deny) and empty schedules", async () => {
    const defaults: RequestPolicy = { alwaysAllow: "tool", selfApproval: "deny", reminders: [60] };
    expect(await policyFor({}, { routes: [{ match: {}, selfApproval: "allow", reminders: [], escalate: [] }], defaults })).toEqual({
      alwaysAllow: "tool",
      route: "routes.0",
    });
  });

  it("keeps the quorum on requests that take one (a lone yes/no question does) and refuses the rest with 400 on kind", async () => {
    const routes = [{ match: {}, quorum: 3 }];
    expect((await policyFor(yesNo, { routes })).quorum).toBe(3);
    expect((await policyFor({ kind: "step_gate", toolName: "Bash", input: {} }, { routes })).quorum).toBe(3);
    expect(await refusal(policyFor(question, { routes }))).toEqual(problemAt("kind", /route routes\.0 needs 3 approvals, which a ask_user_question request/));
  });
});

describe("the request's approvers only narrow its route's", () => {
  it("under approvers: any, any list is a narrowing", async () => {
    expect((await policyFor({ approvers: { users: [CAROL.id], usergroups: [LEADS] } })).approvers).toEqual({ users: [CAROL.id], usergroups: [LEADS] });
  });

  it("takes some of the route's users and groups, once each", async () => {
    const policy = await policyFor({ ...prod, approvers: { users: [BOB.id, BOB.id], usergroups: [ONCALL] }, quorum: 2 }, { routes: [prodRoute] });
    expect(policy.approvers).toEqual({ users: [BOB.id], usergroups: [ONCALL] });
  });

  it("takes a user the route lists only through a group they are in, asking the directory", async () => {
    const directory = peopleDirectory({ [ONCALL]: [CAROL.id] });
    const policy = await policyFor({ approvers: { users: [ALICE.id, CAROL.id] } }, { routes: [groupRoute], directory });
    expect(policy.approvers).toEqual({ users: [ALICE.id, CAROL.id] });
    expect(directory.calls).toEqual([`usergroupMembers ${ONCALL}`]);
  });

  it("refuses a user the route does not list and has no groups for: 400 on approvers.users.<i>, no lookup", async () => {
    const directory = peopleDirectory();
    const routes = [{ match: {}, approvers: { users: [ALICE.id, BOB.id] } }];
    expect(await refusal(policyFor({ approvers: { users: [ALICE.id, CAROL.id] } }, { routes, directory }))).toEqual(
      problemAt("approvers.users.1", "is not one of the route's approvers (a request may only narrow who may answer)"),
    );
    expect(directory.calls).toEqual([]);
  });

  it("refuses a user in none of the route's groups: 400 on approvers.users.<i>", async () => {
    const directory = peopleDirectory({ [ONCALL]: [ALICE.id] });
    expect(await refusal(policyFor({ approvers: { users: [CAROL.id] } }, { routes: [groupRoute], directory }))).toEqual(
      problemAt("approvers.users.0", "is neither one of the route's approvers nor in its user groups (a request may only narrow who may answer)"),
    );
  });

  it("refuses a group the route does not list: 400 on approvers.usergroups.<i>", async () => {
    expect(await refusal(policyFor({ ...prod, approvers: { usergroups: [ONCALL, LEADS] } }, { routes: [prodRoute] }))).toEqual(
      problemAt("approvers.usergroups.1", "is not one of the route's user groups (a request may only narrow who may answer)"),
    );
  });

  it.each([
    ["no lists", {}],
    ["two empty lists", { users: [], usergroups: [] }],
  ])("refuses approvers with %s: 400 on approvers", async (_, approvers) => {
    expect(await refusal(policyFor({ approvers }))).toEqual(problemAt("approvers", /^names nobody/));
  });

  it("answers 503 relay_slack_unavailable when Slack cannot say who is in the group", async () => {
    expect(await refusal(policyFor({ approvers: { users: [CAROL.id] } }, { routes: [groupRoute], directory: unavailable }))).toMatchObject({
      code: "relay_slack_unavailable",
      status: 503,
    });
  });

  it("answers 503 relay_slack_unavailable for a group lookup without a directory", async () => {
    expect(await refusal(policyFor({ approvers: { users: [CAROL.id] } }, { routes: [groupRoute] }))).toMatchObject({
      code: "relay_slack_unavailable",
      status: 503,
    });
  });
});

describe("the request's quorum only raises its route's", () => {
  it("takes a quorum at least the route's", async () => {
    expect((await policyFor({ ...prod, quorum: 3 }, { routes: [prodRoute] })).quorum).toBe(3);
  });

  it("refuses a quorum below the route's: 400 on quorum", async () => {
    expect(await refusal(policyFor({ ...prod, quorum: 1 }, { routes: [prodRoute] }))).toEqual(
      problemAt("quorum", "must be at least the route's quorum of 2 (a request may only ask for more approvals)"),
    );
  });

  it("refuses a quorum its users-only approvers cannot reach: 400 on quorum", async () => {
    expect(await refusal(policyFor({ approvers: { users: [ALICE.id, BOB.id] }, quorum: 3 }))).toEqual(
      problemAt("quorum", "is more than the 2 approvers who may answer"),
    );
  });

  it("refuses approvers narrowed below the route's quorum: 400 on approvers", async () => {
    expect(await refusal(policyFor({ ...prod, approvers: { users: [ALICE.id] } }, { routes: [prodRoute] }))).toEqual(
      problemAt("approvers", "names 1 approver, fewer than the route's quorum of 2"),
    );
  });

  it.each([
    ["ask_user_question", question],
    ["a text question", { kind: "interactive_questions", questions: [{ id: "why", question: "Why?", type: "text" }] }],
    [
      "two yes/no questions",
      {
        kind: "interactive_questions",
        questions: [
          { id: "a", question: "A?", type: "confirm" },
          { id: "b", question: "B?", type: "confirm" },
        ],
      },
    ],
  ])("refuses a quorum above one on %s, which takes the first answer: 400 on quorum", async (_, body) => {
    expect(await refusal(policyFor({ ...body, quorum: 2 }))).toEqual(problemAt("quorum", /request takes the first answer of an approver/));
  });

  it("accepts quorum 1 on a kind that takes no quorum, and a quorum on a lone yes/no question", async () => {
    expect(await policyFor({ ...question, quorum: 1 })).toEqual({ alwaysAllow: "tool", route: "default" });
    expect((await policyFor({ ...yesNo, quorum: 2 })).quorum).toBe(2);
  });

  it("finds bad input before asking Slack: a 400, not a 503, while Slack is away", async () => {
    const body = { ...prod, quorum: 1, requestedBy: { email: "alice@example.com" }, approvers: { users: [CAROL.id] } };
    expect(await refusal(policyFor(body, { routes: [prodRoute], directory: unavailable }))).toMatchObject({ status: 400 });
  });
});

describe("requestedBy", () => {
  it("takes a Slack user id as it is, without a lookup or a directory", async () => {
    expect((await policyFor({ requestedBy: { slackUserId: ALICE.id } })).requestedBy).toEqual({ id: ALICE.id });
  });

  it("resolves an email to its Slack user id and keeps both", async () => {
    const directory = peopleDirectory({}, { "alice@example.com": ALICE.id });
    expect((await policyFor({ requestedBy: { email: "alice@example.com" } }, { directory })).requestedBy).toEqual({ id: ALICE.id, email: "alice@example.com" });
    expect(directory.calls).toEqual(["userIdByEmail alice@example.com"]);
  });

  it("refuses an email Slack knows nobody by: 400 on requestedBy.email", async () => {
    expect(await refusal(policyFor({ requestedBy: { email: "nobody@example.com" } }, { directory: peopleDirectory() }))).toEqual(
      problemAt("requestedBy.email", /^is not the email of a Slack user/),
    );
  });

  it("answers 503 relay_slack_unavailable when Slack cannot be asked, or there is no directory", async () => {
    const requestedBy = { email: "alice@example.com" };
    expect(await refusal(policyFor({ requestedBy }, { directory: unavailable }))).toMatchObject({ code: "relay_slack_unavailable", status: 503 });
    expect(await refusal(policyFor({ requestedBy }))).toMatchObject({ code: "relay_slack_unavailable", status: 503 });
  });
});
