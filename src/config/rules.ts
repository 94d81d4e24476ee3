/**
 * Values the relay cannot check with a plain pattern, checked rule by rule so
 * that a refused value says which rule it broke (issue 20): a Slack token of
 * the wrong kind, a signing secret of the wrong length, a `name:token` pair
 * without its name, a metrics token with a space. A refusal is a sentence
 * that never quotes the value (it is a secret): at most a known token prefix
 * such as `xoxp-`, a length, or a token's name.
 */
import { z } from "zod";

/** A broken rule, in words that never quote the value. */
export interface Refusal {
  refused: string;
}

export const refuse = (rule: string): Refusal => ({ refused: rule });

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === "object" && value !== null && "refused" in value;
}

/** Marks the issues whose message names the broken rule (./config.ts puts it in the line). */
export const RULE_PARAMS = { rule: true } as const;

/** A string variable read by `read`: its value, or the rule it broke. */
export function ruled<T>(read: (value: string) => T | Refusal) {
  return z.string().transform((value, ctx): Exclude<T, Refusal> => {
    const result = read(value);
    if (isRefusal(result)) {
      ctx.addIssue({ code: "custom", message: result.refused, params: RULE_PARAMS });
      return z.NEVER;
    }
    return result as Exclude<T, Refusal>;
  });
}

/** The entries of a comma-separated list, trimmed, empty ones left out. */
export function commaList(value: string): string[] {
  return value
    .split(",")
    .map((entry) => entry.trim())
    .filter(Boolean);
}

const SLACK_TOKEN_KINDS = {
  "xoxb-": "a bot token",
  "xapp-": "an app-level token",
  "xoxp-": "a user token",
  "xoxe-": "a token rotation token",
  "xoxc-": "a browser session token",
} as const;

/** A Slack token of one kind: its prefix (named when it is another known kind), then letters, digits and '-'. */
export function slackToken(prefix: "xoxb-" | "xapp-") {
  const wanted = `${SLACK_TOKEN_KINDS[prefix]} (${prefix}…)`;
  return ruled((value) => {
    if (!value.startsWith(prefix)) {
      const other = Object.entries(SLACK_TOKEN_KINDS).find(([known]) => value.startsWith(known));
      return refuse(other ? `it is ${other[1]} (${other[0]}…), not ${wanted}` : `it does not start with ${prefix} as ${wanted} does`);
    }
    if (value.length === prefix.length) return refuse(`nothing follows ${prefix}`);
    if (!/^[A-Za-z0-9-]+$/.test(value.slice(prefix.length))) {
      return refuse(`it holds a character other than letters, digits and '-' after ${prefix} (a space or a quote copied with it?)`);
    }
    return value;
  });
}

/** Slack's signing secrets are 32 hexadecimal characters (Basic Information → App Credentials). */
const SIGNING_SECRET_LENGTH = 32;

export const signingSecret = ruled((value) => {
  if (value.length !== SIGNING_SECRET_LENGTH) {
    return refuse(`it is ${characters(value.length)} long, and a signing secret is ${SIGNING_SECRET_LENGTH} hexadecimal characters`);
  }
  if (!/^[0-9A-Fa-f]+$/.test(value)) return refuse("it holds a character that is not hexadecimal (0-9, a-f), as a signing secret is");
  return value;
});

/** Shortest and longest agent, admin and metrics token (characters). */
export const TOKEN_LENGTH = { min: 16, max: 512 } as const;
const TOKEN_NAME = /^[\w.@-]{1,64}$/;

export interface NamedToken {
  /** Shown in Slack as the requester and in the audit log. */
  name: string;
  token: string;
}

/** RELAY_TOKENS and RELAY_ADMIN_TOKENS: comma-separated `name:token` pairs, at least one, names unique. */
export const namedTokens = ruled((value): NamedToken[] | Refusal => {
  const pairs = commaList(value);
  if (pairs.length === 0) return refuse("it holds no name:token pair");
  const tokens: NamedToken[] = [];
  for (const [index, pair] of pairs.entries()) {
    const entry = `entry ${index + 1}`;
    const colon = pair.indexOf(":");
    if (colon < 0) return refuse(`${entry} has no ':' between a name and a token`);
    const [name, token] = [pair.slice(0, colon).trim(), pair.slice(colon + 1).trim()];
    if (name === "") return refuse(`${entry} has no name before its ':'`);
    if (!TOKEN_NAME.test(name)) return refuse(`the name of ${entry} is not 1 to 64 letters, digits, '.', '_', '@' or '-'`);
    const problem = lengthProblem(token);
    if (problem) return refuse(`the token of "${name}" ${problem}`);
    if (tokens.some((t) => t.name === name)) return refuse(`the name "${name}" is given twice; token names must be unique`);
    tokens.push({ name, token });
  }
  return tokens;
});

/** METRICS_TOKEN: one secret, no name, no space (Prometheus sends it as a bearer token). */
export const bearerToken = ruled((value) => {
  const problem = lengthProblem(value) ?? (/\s/.test(value) ? "holds a space" : undefined);
  return problem ? refuse(`it ${problem}`) : value;
});

function lengthProblem(token: string): string | undefined {
  if (token.length >= TOKEN_LENGTH.min && token.length <= TOKEN_LENGTH.max) return undefined;
  return `is ${characters(token.length)} long, not ${TOKEN_LENGTH.min} to ${TOKEN_LENGTH.max}`;
}

function characters(count: number): string {
  return `${count} character${count === 1 ? "" : "s"}`;
}
