/**
 * Where the relay is and how to reach it, for `ask`, `hook` and `audit`: --url and
 * --token flags, else RELAY_URL and RELAY_TOKEN, else (agent commands, when
 * neither is given) the card a relay in local mode wrote
 * (src/protocol/local-relay.ts), else a message that says which one is missing.
 */
import { RelayClient } from "../client/relay-client.js";
import type { RelayClientOptions } from "../client/types.js";
import { localRelayPath, readLocalRelay } from "../protocol/local-relay.js";
import type { CliIo } from "./io.js";

export interface Connection {
  url: string;
  token: string;
  /** Retries of an unreachable relay (RELAY_RETRIES). */
  retries: number;
}

export const CONNECTION_OPTIONS = {
  url: { type: "string" },
  token: { type: "string" },
} as const;

const AGENT_TOKEN = "an agent token from RELAY_TOKENS";

/** The connection, or a message naming what is missing or wrong; `tokenKind` says which token the command takes (an agent's finds a local relay). */
export function connection(values: { url?: string | undefined; token?: string | undefined }, env: CliIo["env"], tokenKind = AGENT_TOKEN): Connection | string {
  let url = values.url ?? env.RELAY_URL;
  let token = values.token ?? env.RELAY_TOKEN;
  const local = !url && !token && tokenKind === AGENT_TOKEN ? readLocalRelay(env.XDG_STATE_HOME) : undefined;
  if (local) ({ url, token } = local);
  if (!url) {
    const start = tokenKind === AGENT_TOKEN ? `, or start a relay on this machine with npm start (it writes ${localRelayPath(env.XDG_STATE_HOME)})` : "";
    return `RELAY_URL is not set: pass --url or set RELAY_URL to the relay's address${start}`;
  }
  if (!/^https?:\/\/[^/]/i.test(url)) return `the relay URL must start with http:// or https://, got "${url}"`;
  if (!token) return `RELAY_TOKEN is not set: pass --token or set RELAY_TOKEN to ${tokenKind}`;
  const retries = env.RELAY_RETRIES ?? "5";
  if (!/^\d{1,2}$/.test(retries)) return `RELAY_RETRIES must be a whole number from 0 to 99, got "${retries}"`;
  return { url, token, retries: Number(retries) };
}

export function clientFor(connection: Connection, io: CliIo, options: Partial<RelayClientOptions> = {}): RelayClient {
  return new RelayClient({ url: connection.url, token: connection.token, retries: connection.retries, ...(io.fetch ? { fetch: io.fetch } : {}), ...options });
}

/** A whole number of seconds from 1 to `max`, or undefined. */
export function parseSeconds(value: string, max: number): number | undefined {
  if (!/^\d{1,7}$/.test(value)) return undefined;
  const seconds = Number(value);
  return seconds >= 1 && seconds <= max ? seconds : undefined;
}
