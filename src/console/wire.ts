/**
 * What the console's page and its routes share on the wire: the cookie and
 * header names, the request as the page gets it, and how a body is parsed
 * (every bad field a 400 naming its path).
 */
import type { z } from "zod";
import { invalidRequest } from "../requests/errors.js";
import { toView, type RequestRecord } from "../requests/model.js";

export const SESSION_COOKIE = "relay_console";
export const CSRF_HEADER = "x-csrf-token";

/** The request as the console shows it: the API's view, its body, channel, token and when it ended. */
export function consoleView(record: RequestRecord) {
  return {
    ...toView(record),
    body: record.body,
    channel: record.channel,
    token: record.tokenName,
    ...(record.endedAt === undefined ? {} : { endedAt: new Date(record.endedAt).toISOString() }),
    ...(record.cancelledBy === undefined ? {} : { cancelledBy: record.cancelledBy }),
  };
}

export function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(result.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })));
  return result.data;
}
