/**
 * POST /slack/events in HTTP mode: hands the raw request to the Slack HTTP
 * receiver (src/slack/receiver.ts), which reads the body itself, checks
 * Slack's signature on those exact bytes and answers by itself. So the route
 * lives in a scope of its own where Fastify parses nothing; the relay only
 * refuses a body that declares more than the limit, before the receiver
 * reads it.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { HttpApp } from "../transport.js";
import { serveRoute } from "../api.js";
import { notFound, tooLarge } from "../errors.js";
import { REQUEST_ID_HEADER } from "../logging.js";

export type SlackListener = (req: IncomingMessage, res: ServerResponse) => void;

/** Bolt throws this code when the request is not for one of its endpoints. */
const BOLT_UNHANDLED = "slack_bolt_http_receiver_deferred_request_error";

export function registerSlackRoute(app: HttpApp, { listener, bodyLimitBytes }: { listener: SlackListener; bodyLimitBytes: number }): void {
  void app.register(async (scope: HttpApp) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser("*", (_request, _payload, done) => done(null, undefined));
    serveRoute(
      scope,
      "slackEvents",
      {
        onRequest: async (request) => {
          if (Number(request.headers["content-length"]) > bodyLimitBytes) throw tooLarge(bodyLimitBytes);
        },
      },
      async (request, reply) => {
        // Bolt writes the response itself; the request id still goes back for the log's sake.
        reply.raw.setHeader(REQUEST_ID_HEADER, request.id);
        try {
          listener(request.raw, reply.raw);
        } catch (error) {
          if ((error as { code?: unknown } | null)?.code === BOLT_UNHANDLED) throw notFound("This path");
          throw error;
        }
        return reply.hijack();
      },
    );
  });
}
