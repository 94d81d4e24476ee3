/**
 * POST /slack/events in HTTP mode: hands the raw request to Bolt's receiver,
 * which checks Slack's signature and answers by itself. The relay only
 * refuses bodies that declare more than the limit, before Bolt reads them.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { assertDeclaredLength } from "../body.js";
import { notFound } from "../errors.js";
import type { RouteTable } from "../route.js";

export type SlackListener = (req: IncomingMessage, res: ServerResponse) => void;

export const SLACK_EVENTS_PATH = "/slack/events";

/** Bolt throws this code when the request is not for one of its endpoints. */
const BOLT_UNHANDLED = "slack_bolt_http_receiver_deferred_request_error";

export function registerSlackRoute(router: RouteTable, deps: { listener: SlackListener; bodyLimitBytes: number }): void {
  router.add("POST", SLACK_EVENTS_PATH, {
    auth: false,
    async handle({ req, res }) {
      assertDeclaredLength(req, deps.bodyLimitBytes);
      try {
        deps.listener(req, res);
      } catch (error) {
        if ((error as { code?: unknown } | null)?.code === BOLT_UNHANDLED) throw notFound("This path");
        throw error;
      }
      return undefined;
    },
  });
}
