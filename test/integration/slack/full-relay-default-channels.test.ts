/**
 * `match.channel` matches the channel the request will be posted to, after
 * defaults (issue 16 item 3), written as the attack: with no
 * SLACK_DEFAULT_CHANNEL, a request that names no channel is posted to the
 * first of the default route's `channels`. A route for that channel must
 * catch it, or it would land there under the lenient default policy.
 */
import { afterEach, beforeEach, expect, it } from "vitest";
import { ALICE, BOB } from "../../fixtures/people.js";
import { configFiles } from "../../helpers/config-files.js";
import { agentCall, startFullRelay, type FullRelay } from "../../helpers/full-relay.js";
import { CHANNEL } from "../../helpers/slack.js";

const OTHER_CHANNEL = "C0OTHER0001";
const CONFIG = `
routes:
  - match: { channel: ${CHANNEL} }
    approvers: { users: [${ALICE.id}, ${BOB.id}] }
    quorum: 2
default:
  channels: [${CHANNEL}, ${OTHER_CHANNEL}]
`;

const writeConfig = configFiles("yaml");
let relay: FullRelay;
beforeEach(async () => {
  // An empty variable counts as unset: the default route's channels are all there is.
  relay = await startFullRelay({ env: { RELAY_CONFIG_FILE: writeConfig(CONFIG), SLACK_DEFAULT_CHANNEL: "" } });
});
afterEach(async () => {
  expect(relay.errors()).toEqual([]);
  await relay.close();
});

it("a request that names no channel, posted to the default route's first channel, falls under that channel's route", async () => {
  const created = await agentCall(relay.url, "/v1/requests", {
    method: "POST",
    body: { kind: "permission", toolName: "Bash", input: { command: "make deploy" } },
  });
  expect(created.status).toBe(201);
  const record = await relay.service.get(String(created.body!.id));
  expect(record?.channel).toBe(CHANNEL);
  expect({ route: record?.policy?.route, quorum: record?.policy?.quorum }).toEqual({ route: "routes.0", quorum: 2 });
});
