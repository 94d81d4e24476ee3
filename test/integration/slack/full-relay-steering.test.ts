/**
 * Routing agents cannot steer around (issue 16 item 3), written as the
 * attacks, against the whole relay as `approval-relay serve` runs it with a
 * RELAY_CONFIG_FILE in YAML: labels that look like `env: prod` but are not
 * the same string, a request that names no channel, the same question asked
 * as another kind, a request that leaves its label out. Each either lands on
 * the production route (quorum 2) or is refused with a 400 naming the field;
 * none reaches the lenient default route.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ALICE, BOB } from "../../fixtures/people.js";
import { configFiles } from "../../helpers/config-files.js";
import { agentCall, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { CHANNEL } from "../../helpers/slack.js";

const OTHER_CHANNEL = "C0OTHER0001";
const CONFIG = `
routes:
  - match: { labels: { env: prod } }
    approvers: { users: [${ALICE.id}, ${BOB.id}] }
    quorum: 2
    kinds: [permission, step_gate, interactive_questions]
  - match: { channel: ${CHANNEL} }
    approvers: { users: [${ALICE.id}, ${BOB.id}] }
    quorum: 2
default:
  requireLabels: [env]
`;

const writeConfig = configFiles("yaml");
let relay: FullRelay;
beforeEach(async () => {
  relay = await startFullRelay({ env: { RELAY_CONFIG_FILE: writeConfig(CONFIG) } });
});
afterEach(async () => {
  expect(relay.errors()).toEqual([]);
  await relay.close();
});

const deploy = (fields: Record<string, unknown>) => ({ kind: "permission", toolName: "Bash", input: { command: "make deploy" }, ...fields });

/** Creates a request and returns the route and quorum the relay stored it under. */
async function routeOf(body: unknown): Promise<{ route: unknown; quorum: unknown }> {
  const created = await agentCall(relay.url, "/v1/requests", { method: "POST", body });
  expect(created.status).toBe(201);
  const record = await relay.service.get(String(created.body!.id));
  return { route: record?.policy?.route, quorum: record?.policy?.quorum };
}

async function refused(body: unknown): Promise<Array<{ path: string; message: string }>> {
  const created = await agentCall(relay.url, "/v1/requests", { method: "POST", body });
  expect(created.status).toBe(400);
  return (created.body!.error as { details: Array<{ path: string; message: string }> }).details;
}

describe("labels that look like env=prod", () => {
  it.each([
    ["Prod", { env: "Prod" }],
    ["a trailing space", { env: "prod " }],
    ["fullwidth letters", { env: "ｐｒｏｄ" }],
    ["the key Env", { Env: "prod" }],
    ["a key with a leading space", { " env": "prod" }],
  ])("with %s land on the production route, quorum 2", async (_, labels) => {
    expect(await routeOf(deploy({ channel: OTHER_CHANNEL, labels }))).toEqual({ route: "routes.0", quorum: 2 });
  });

  it.each([
    ["a Greek omicron", "prοd", "U+03BF"],
    ["a Cyrillic o", "prоd", "U+043E"],
    ["a trailing zero-width space", "prod\u200b", "U+200B"],
  ])("with %s are refused with 400 naming the label and the character", async (_, value, codePoint) => {
    const details = await refused(deploy({ channel: OTHER_CHANNEL, labels: { env: value } }));
    expect(details).toEqual([{ path: "labels.env", message: expect.stringContaining(codePoint) as unknown }]);
    expect(relay.slack.calls.filter((call) => call.method === "chat.postMessage")).toEqual([]);
  });
});

it("a request that names no channel matches a route for the channel it will be posted to", async () => {
  expect(await routeOf(deploy({ labels: { env: "dev" } }))).toEqual({ route: "routes.1", quorum: 2 });
});

it("the same deploy asked as an AskUserQuestion is refused by the production route's kinds, with 400 on kind", async () => {
  const question = {
    question: "Deploy to prod?",
    header: "Deploy",
    multiSelect: false,
    options: [
      { label: "Yes", description: "go" },
      { label: "No", description: "stop" },
    ],
  };
  const details = await refused({ kind: "ask_user_question", channel: OTHER_CHANNEL, labels: { env: "prod" }, questions: [question] });
  expect(details).toEqual([{ path: "kind", message: "the relay's route routes.0 accepts only permission, step_gate, interactive_questions requests" }]);
});

it("the same deploy asked as a one-choice question cannot dodge the quorum: 400 on kind", async () => {
  const choice = { id: "go", question: "Deploy to prod?", type: "choice", options: ["yes"] };
  const details = await refused({ kind: "interactive_questions", channel: OTHER_CHANNEL, labels: { env: "prod" }, questions: [choice] });
  expect(details).toEqual([{ path: "kind", message: expect.stringContaining("routes.0 needs 2 approvals") as unknown }]);
});

it("a request that leaves its env label out does not reach the default route: 400 on labels.env", async () => {
  expect(await refused(deploy({ channel: OTHER_CHANNEL }))).toEqual([{ path: "labels.env", message: "is required by the relay's route default" }]);
});
