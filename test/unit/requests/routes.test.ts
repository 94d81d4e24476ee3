/**
 * Approver routes at create (docs/architecture.md §7): matchRoute takes the first route
 * whose every match field holds (token, kind, whole tool name, agent,
 * channel, labels), else the default route; chooseChannel binds the channel
 * to the route's; newRecord takes the route's channel and timeout and keeps
 * only the reminders and escalations the deadline leaves time for. The
 * policy itself (narrowing) is tested in create-policy.test.ts.
 */
import { describe, expect, it } from "vitest";
import { Route } from "../../../src/requests/route-schema.js";
import { RelayError } from "../../../src/requests/errors.js";
import type { RequestPolicy } from "../../../src/requests/model.js";
import { newRecord } from "../../../src/requests/new-record.js";
import { admit, chooseChannel, matchRoute } from "../../../src/requests/routes.js";
import { bodyOf, T0 } from "../../helpers/service-harness.js";
import { ALICE } from "../../fixtures/people.js";

const route = (fields: Record<string, unknown>) => Route.parse(fields);
const subject = (fields: Record<string, unknown> = {}, tokenName = "ci-bot") => ({ tokenName, body: bodyOf(fields) });
const question = { kind: "ask_user_question", questions: [{ question: "Which?", options: [{ label: "a" }, { label: "b" }] }] };

describe("matchRoute on labels and channels an agent could bend", () => {
  it("matches label values whatever their case, on both sides", () => {
    const routes = [route({ match: { labels: { Env: "PROD" } } })];
    expect(matchRoute(routes, subject({ labels: { env: "prod" } })).name).toBe("routes.0");
    expect(matchRoute(routes, subject({ labels: { ENV: "Prod" } })).name).toBe("routes.0");
  });

  it("matches `channel` against where a request that names none will go: the default channel", () => {
    const routes = [route({ match: { channel: "C0DEFAULT01" } })];
    expect(matchRoute(routes, { ...subject(), defaultChannel: "C0DEFAULT01" }).name).toBe("routes.0");
    expect(matchRoute(routes, { ...subject({ channel: "C0ELSEWHERE" }), defaultChannel: "C0DEFAULT01" }).name).toBe("default");
  });
});

describe("admit", () => {
  const refusal = (run: () => void) => {
    try {
      run();
    } catch (error) {
      expect(error).toBeInstanceOf(RelayError);
      return (error as RelayError).details;
    }
    throw new Error("admitted");
  };

  it("refuses a kind the route's kinds leave out, with 400 on kind", () => {
    const matched = { name: "routes.0", route: route({ match: {}, kinds: ["permission"] }) };
    expect(() => admit(matched, bodyOf({}))).not.toThrow();
    expect(refusal(() => admit(matched, bodyOf(question)))).toEqual([{ path: "kind", message: "the relay's route routes.0 accepts only permission requests" }]);
  });

  it("refuses a request without a label the route requires, naming each missing one; the default route admits by its own keys", () => {
    const matched = { name: "routes.0", route: route({ match: {}, requireLabels: ["Env", "team"] }) };
    expect(refusal(() => admit(matched, bodyOf({ labels: { team: "payments" } })))).toEqual([
      { path: "labels.env", message: "is required by the relay's route routes.0" },
    ]);
    expect(() => admit(matched, bodyOf({ labels: { ENV: "prod", team: "payments" } }))).not.toThrow();
    expect(refusal(() => admit({ name: "default" }, bodyOf({}), { requireLabels: ["env"] }))).toEqual([
      { path: "labels.env", message: "is required by the relay's route default" },
    ]);
    expect(() => admit({ name: "routes.0", route: route({ match: {} }) }, bodyOf({}), { requireLabels: ["env"] })).not.toThrow();
  });
});

describe("matchRoute", () => {
  it("takes the default route when no routes are configured", () => {
    expect(matchRoute([], subject())).toEqual({ name: "default" });
  });

  it("matches on the agent token's name", () => {
    const routes = [route({ match: { token: "deploy-bot" } })];
    expect(matchRoute(routes, subject({}, "deploy-bot")).name).toBe("routes.0");
    expect(matchRoute(routes, subject({}, "ci-bot")).name).toBe("default");
  });

  it("matches on one kind or on any of a list of kinds", () => {
    const one = [route({ match: { kind: "permission" } })];
    const list = [route({ match: { kind: ["step_gate", "ask_user_question"] } })];
    expect(matchRoute(one, subject()).name).toBe("routes.0");
    expect(matchRoute(one, subject(question)).name).toBe("default");
    expect(matchRoute(list, subject(question)).name).toBe("routes.0");
    expect(matchRoute(list, subject()).name).toBe("default");
  });

  it("matches the tool pattern against the whole tool name only", () => {
    const routes = [route({ match: { tool: "Bash|mcp__k8s__.*" } })];
    expect(matchRoute(routes, subject({ toolName: "Bash" })).name).toBe("routes.0");
    expect(matchRoute(routes, subject({ toolName: "mcp__k8s__delete" })).name).toBe("routes.0");
    expect(matchRoute(routes, subject({ toolName: "BashOutput" })).name).toBe("default");
    expect(matchRoute(routes, subject({ toolName: "my_mcp__k8s__x" })).name).toBe("default");
  });

  it("never matches a tool pattern to a question kind, which names no tool", () => {
    expect(matchRoute([route({ match: { tool: ".*" } })], subject(question)).name).toBe("default");
  });

  it("matches on the agent's name", () => {
    const routes = [route({ match: { agent: "nightly" } })];
    expect(matchRoute(routes, subject({ agent: { name: "nightly" } })).name).toBe("routes.0");
    expect(matchRoute(routes, subject({ agent: { name: "nightly-2" } })).name).toBe("default");
    expect(matchRoute(routes, subject()).name).toBe("default");
  });

  it("matches on the channel the request names", () => {
    const routes = [route({ match: { channel: "C0PRODDEPLOY" } })];
    expect(matchRoute(routes, subject({ channel: "C0PRODDEPLOY" })).name).toBe("routes.0");
    expect(matchRoute(routes, subject({ channel: "C0OTHER001" })).name).toBe("default");
    expect(matchRoute(routes, subject()).name).toBe("default");
  });

  it("matches labels only when every listed label is equal; other labels do not matter", () => {
    const routes = [route({ match: { labels: { env: "prod", team: "payments" } } })];
    expect(matchRoute(routes, subject({ labels: { env: "prod", team: "payments", extra: "x" } })).name).toBe("routes.0");
    expect(matchRoute(routes, subject({ labels: { env: "prod" } })).name).toBe("default");
    expect(matchRoute(routes, subject({ labels: { env: "staging", team: "payments" } })).name).toBe("default");
    expect(matchRoute(routes, subject()).name).toBe("default");
  });

  it("needs every match field to hold", () => {
    const routes = [route({ match: { token: "deploy-bot", kind: "permission", tool: "Bash", labels: { env: "prod" } } })];
    expect(matchRoute(routes, subject({ labels: { env: "prod" } }, "deploy-bot")).name).toBe("routes.0");
    expect(matchRoute(routes, subject({ labels: { env: "prod" }, toolName: "Write" }, "deploy-bot")).name).toBe("default");
    expect(matchRoute(routes, subject({ labels: { env: "prod" } }, "ci-bot")).name).toBe("default");
  });

  it("takes the first matching route, and an empty match matches everything", () => {
    const routes = [route({ match: { token: "other" } }), route({ match: { kind: "permission" }, channel: "C0FIRST001" }), route({ match: {} })];
    expect(matchRoute(routes, subject())).toEqual({ name: "routes.1", route: routes[1] });
    expect(matchRoute(routes, subject(question)).name).toBe("routes.2");
  });
});

function channelError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(RelayError);
    return (error as RelayError).details;
  }
  throw new Error("no error");
}

describe("chooseChannel", () => {
  const prod = { name: "routes.0", route: route({ match: {}, channel: "C0PRODDEPLOY", channels: ["C0PRODBACKUP"] }) };

  it("posts a request that names no channel to its route's channel, not the default", () => {
    expect(chooseChannel({ matched: prod, defaultChannel: "C0DEFAULT01" })).toBe("C0PRODDEPLOY");
  });

  it("lets a request name its route's channel or one of the route's channels", () => {
    expect(chooseChannel({ matched: prod, requested: "C0PRODDEPLOY" })).toBe("C0PRODDEPLOY");
    expect(chooseChannel({ matched: prod, requested: "C0PRODBACKUP" })).toBe("C0PRODBACKUP");
  });

  it("refuses any other channel with a 400 on channel, naming the route and what it allows", () => {
    expect(channelError(() => chooseChannel({ matched: prod, requested: "D0LENIENT01", defaultChannel: "C0DEFAULT01" }))).toEqual([
      { path: "channel", message: "the relay's route routes.0 allows only C0PRODDEPLOY, C0PRODBACKUP" },
    ]);
  });

  it("takes the first of a route's channels when the route names no channel", () => {
    const matched = { name: "routes.0", route: route({ match: {}, channels: ["C0TEAMA0001", "C0TEAMB0001"] }) };
    expect(chooseChannel({ matched, defaultChannel: "C0DEFAULT01" })).toBe("C0TEAMA0001");
    expect(channelError(() => chooseChannel({ matched, requested: "C0DEFAULT01" }))).toEqual([
      { path: "channel", message: "the relay's route routes.0 allows only C0TEAMA0001, C0TEAMB0001" },
    ]);
  });

  it("lets a route that names no channel take any channel, as before routes", () => {
    const matched = { name: "routes.0", route: route({ match: {}, timeoutSeconds: 60 }) };
    expect(chooseChannel({ matched, requested: "C0ANYWHERE1", defaultChannels: ["C0SANDBOX01"] })).toBe("C0ANYWHERE1");
    expect(chooseChannel({ matched, defaultChannel: "C0DEFAULT01" })).toBe("C0DEFAULT01");
  });

  it("lets the default route take any channel when it lists none", () => {
    expect(chooseChannel({ matched: { name: "default" }, requested: "C0ANYWHERE1", defaultChannel: "C0DEFAULT01" })).toBe("C0ANYWHERE1");
  });

  it("limits the default route to its channels and the default channel when it lists some", () => {
    const choice = { matched: { name: "default" }, defaultChannel: "C0DEFAULT01", defaultChannels: ["C0SANDBOX01"] };
    expect(chooseChannel(choice)).toBe("C0DEFAULT01");
    expect(chooseChannel({ ...choice, requested: "C0SANDBOX01" })).toBe("C0SANDBOX01");
    expect(channelError(() => chooseChannel({ ...choice, requested: "D0LENIENT01" }))).toEqual([
      { path: "channel", message: "the relay's route default allows only C0DEFAULT01, C0SANDBOX01" },
    ]);
  });

  it("says so when no channel is known at all", () => {
    expect(channelError(() => chooseChannel({ matched: { name: "default" } }))).toEqual([
      { path: "channel", message: "no channel given and SLACK_DEFAULT_CHANNEL is not set" },
    ]);
  });
});

describe("newRecord under routes", () => {
  const prod = route({ match: { labels: { env: "prod" } }, channel: "C0PRODDEPLOY", timeoutSeconds: 1800, alwaysAllow: "all" });
  const input = (fields: Record<string, unknown>, routes: Route[], policy: RequestPolicy = { alwaysAllow: "tool" }) => {
    const body = bodyOf(fields);
    const matched = matchRoute(routes, { tokenName: "deploy-bot", body });
    return { id: "req-1", tokenName: "deploy-bot", body, createdAt: T0, defaultTimeoutSeconds: 600, defaultChannel: "C0DEFAULT01", matched, policy };
  };

  it("takes the matched route's channel and timeout, and keeps the policy it is given", () => {
    const policy: RequestPolicy = { alwaysAllow: "all", route: "routes.0", quorum: 2 };
    const record = newRecord(input({ labels: { env: "prod" } }, [prod], policy));
    expect(record).toMatchObject({ channel: "C0PRODDEPLOY", expiresAt: T0 + 1800 * 1000, policy });
    expect(record.body.labels).toEqual({ env: "prod" });
  });

  it("keeps the request's own timeout over its route's", () => {
    expect(newRecord(input({ labels: { env: "prod" }, timeoutSeconds: 30 }, [prod])).expiresAt).toBe(T0 + 30_000);
  });

  it("falls back to the default channel and timeout when no route matches", () => {
    const record = newRecord(input({ labels: { env: "dev" } }, [prod]));
    expect(record).toMatchObject({ channel: "C0DEFAULT01", expiresAt: T0 + 600 * 1000 });
  });

  it("drops reminders and escalations due at or after the request's own deadline: they could never be sent", () => {
    const policy: RequestPolicy = {
      alwaysAllow: "tool",
      reminders: [10, 29, 30, 300],
      escalate: [
        { after: 20, users: [ALICE.id] },
        { after: 60, usergroups: ["S0LEADS01"] },
      ],
    };
    expect(newRecord(input({ timeoutSeconds: 30 }, [], policy)).policy).toEqual({
      alwaysAllow: "tool",
      reminders: [10, 29],
      escalate: [{ after: 20, users: [ALICE.id] }],
    });
    expect(newRecord(input({ timeoutSeconds: 5 }, [], policy)).policy).toEqual({ alwaysAllow: "tool" });
  });
});
