/**
 * The request fields every adapter fills the same way (channel, who asks,
 * timeout, context, labels, who the request is for), and the small helpers that keep SDK-supplied text within
 * the relay's limits (src/protocol/request-body.ts), so a long title is cut
 * instead of refused.
 */
import { hostname } from "node:os";
import { LIMITS, type AgentInfo, type Labels, type RequestedBy } from "../protocol/request-body.js";
import type { PermissionRequestBody } from "./types.js";

export interface AdapterOptions {
  /** Slack channel or user id; default from the relay's configuration. */
  channel?: string;
  /** Who asks, shown in Slack. Host and working directory default to this machine's. */
  agent?: AgentInfo;
  /** Seconds a person has to answer; default from the relay's configuration. */
  timeoutSeconds?: number;
  /** mrkdwn shown with every request (escaped by the relay). */
  context?: string;
  /** Sent with every request, for the relay's routes to match on (e.g. `{env: "prod"}`); shown in Slack. */
  labels?: Labels;
  /**
   * Who the requests are made for, by Slack user id or email (resolved by
   * the relay): where the route says `selfApproval: deny`, that person may
   * not answer them.
   */
  requestedBy?: RequestedBy;
  /** Told about every failure that was turned into a deny (for logs). */
  onError?: (error: unknown) => void;
}

type CommonFields = Pick<PermissionRequestBody, "channel" | "agent" | "timeoutSeconds" | "context" | "labels" | "requestedBy">;

/**
 * `extraContext` lines (subagent, MCP server, …) are appended to the
 * configured context; `agent` fills what the caller's `agent` leaves out.
 */
export function commonFields(options: AdapterOptions, extraContext: Array<string | undefined> = [], agent: AgentInfo = {}): CommonFields {
  const context = [options.context, ...extraContext].filter((line): line is string => Boolean(line)).join("\n");
  return definedOnly({
    channel: options.channel,
    agent: { host: hostname(), cwd: process.cwd(), ...definedOnly(agent), ...options.agent },
    timeoutSeconds: options.timeoutSeconds,
    context: clip(context || undefined, LIMITS.context),
    labels: options.labels,
    requestedBy: options.requestedBy,
  });
}

/** The text itself when it fits, else its first `max - 1` characters and "…". */
export function clip(value: string | undefined, max: number): string | undefined {
  if (value === undefined || value.length <= max) return value;
  return `${value.slice(0, max - 1)}…`;
}

/** A copy without the keys whose value is undefined. */
export function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** Tells `onError` about a failure; a throwing `onError` is ignored, so the adapter still answers. */
export function report(options: AdapterOptions, error: unknown): void {
  try {
    options.onError?.(error);
  } catch {
    // The adapter's answer matters more than the log line.
  }
}
