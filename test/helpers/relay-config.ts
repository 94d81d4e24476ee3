/**
 * A Config for buildRelay (src/main.ts) in tests: what loadConfig makes of
 * `env` (a relay with Slack in HTTP mode unless `env` says otherwise), with
 * `over` laid on top for what tests set directly (tokens, routes, a default
 * policy) rather than through a variable.
 */
import { loadConfig, type Config } from "../../src/config/config.js";

/** The variables a relay with Slack needs; the tokens are placeholders that `over.tokens` usually replaces. */
export const SLACK_HTTP_ENV = {
  SLACK_BOT_TOKEN: "xoxb-0000-test-relay",
  SLACK_SIGNING_SECRET: "00000000000000000000000000000000",
  RELAY_TOKENS: "test:tok_test_relay_0123456789",
} as const;

export function relayConfig(env: Record<string, string> = {}, over: Partial<Config> = {}): Config {
  return { ...loadConfig({ ...SLACK_HTTP_ENV, ...env }), ...over };
}
