/**
 * The OpenAPI operations of the routes agents call (docs/architecture.md §3): create, read
 * (long-poll) and cancel a request, and the Claude Code hook, from the same
 * zod schemas the routes parse requests with and build replies by. Placed in
 * the document at the paths of the route list (./api.ts) by ./openapi.ts.
 */
import { z } from "zod";
import {
  ClaudeCodeHookInput,
  MAX_HOOK_TIMEOUT_SECONDS,
  MIN_HOOK_TIMEOUT_SECONDS,
  PermissionRequestOutput,
  PreToolUseOutput,
  RETRIES_UNAVAILABLE_HEADER,
} from "../protocol/claude-code-hook.js";
import { CreateRequestBody, LIMITS, SlackChannelId } from "../protocol/request-body.js";
import { CreatedRequest, MAX_WAIT_SECONDS, RequestView } from "../protocol/request-view.js";
import { agentOnly, bodyRefusals, error, json, refusals, requestId, storeRefusals, type Operations } from "./openapi-shared.js";

const waitQuery = z.object({
  wait: z
    .number()
    .min(0)
    .max(MAX_WAIT_SECONDS)
    .optional()
    .meta({
      description: `Hold up to this many seconds (decimals allowed, at most ${MAX_WAIT_SECONDS}) until the request is no longer pending, then return it as GET does.`,
    }),
});
const idPath = z.object({ id: z.string().min(1).max(200).meta({ description: "The request's id, as the create returned it." }) });
export function agentOperations(): Operations<"createRequest" | "getRequest" | "cancelRequest" | "claudeCodeHook"> {
  return {
    createRequest: {
      summary: "Ask a person in Slack",
      description:
        "Creates a request and posts it to Slack. The same idempotency key from the same token with the same body returns the existing request (200) and posts once; with another body, 409. " +
        "A permission or step_gate request with no idempotency key or callback URL that asks what a pending request of the same token and agent session asks (same tool, same input) joins it: 200 with that request, nothing posted again.",
      requestParams: {
        query: waitQuery,
        header: requestId.extend({
          "Idempotency-Key": z
            .string()
            .min(1)
            .max(LIMITS.idempotencyKey)
            .optional()
            .meta({ description: "Same as the body's `idempotencyKey`; both may be given only if they agree." }),
        }),
      },
      requestBody: { required: true, content: json(CreateRequestBody) },
      responses: {
        "201": {
          description: "Created: `{id, status, expiresAt}`, or the whole request with `?wait` or when it was answered at once.",
          content: json(CreatedRequest),
        },
        "200": { description: "The idempotency key named a request that already exists: the request as GET returns it.", content: json(RequestView) },
        "409": error(
          "`relay_idempotency_mismatch`: the idempotency key was already used by this token with a different body; `details.id` is that request. Use a new key for a new request.",
        ),
        "429": {
          ...error(
            "`relay_too_many_pending`: the agent token already holds as many pending requests as it may (RELAY_MAX_PENDING_PER_TOKEN, or its route's lower `maxPending`), counted over every instance; `details: {pending, limit}`. " +
              "`relay_rate_limited`: the token made more creates in the last minute than RELAY_CREATE_RATE_LIMIT allows on this instance; `details: {limitPerMinute, retryAfterSeconds}`. Nothing was created; try again after `Retry-After` seconds.",
          ),
          headers: z.object({ "Retry-After": z.string().meta({ description: "Seconds to wait before trying again.", example: "30" }) }),
        },
        ...refusals,
        ...agentOnly,
        ...bodyRefusals,
        "503": {
          ...storeRefusals["503"],
          description:
            `${storeRefusals["503"].description} ` +
            "`relay_slack_unavailable`: Slack could not be asked whose `requestedBy.email` it is, or whether a person named in `approvers` is in one of the route's user groups; nothing was created. Try again after `Retry-After` seconds.",
        },
      },
      callbacks: {
        requestEnded: {
          "{$request.body#/callbackUrl}": {
            post: {
              summary: "The request ended",
              description:
                "With `callbackUrl`, the final request is POSTed there once it ends, signed with the agent token: " +
                '`X-Relay-Signature: v1=<hex HMAC-SHA256(token, "v1:" + timestamp + ":" + body)>`. Delivery is at least once.',
              requestParams: {
                header: z.object({
                  "X-Relay-Timestamp": z.string().meta({ description: "Unix seconds." }),
                  "X-Relay-Signature": z.string(),
                  "X-Relay-Request-Id": z.string().meta({ description: "Dedupe on it." }),
                }),
              },
              requestBody: { content: json(RequestView) },
              responses: { "200": { description: "Any 2xx acknowledges the delivery; anything else is retried for six hours." } },
            },
          },
        },
      },
    },
    getRequest: {
      summary: "Read a request, optionally waiting for its answer",
      requestParams: { path: idPath, query: waitQuery, header: requestId },
      responses: {
        "200": { description: "The request.", content: json(RequestView) },
        "404": error("No such request for this token (another agent token's request is not found either; an admin token reads every request)."),
        ...refusals,
        ...storeRefusals,
      },
    },
    cancelRequest: {
      summary: "Cancel a request",
      description: "The Slack message is updated and waiters get `cancelled`.",
      requestParams: { path: idPath, header: requestId },
      responses: {
        "200": { description: "Cancelled (or already cancelled).", content: json(RequestView) },
        "404": error("No such request for this token."),
        "409": error("The request already ended: `relay_already_answered` or `relay_already_ended`, with the request as `details`."),
        ...refusals,
        ...agentOnly,
        ...storeRefusals,
      },
    },
    claudeCodeHook: {
      summary: "A Claude Code `http` hook (PreToolUse, PermissionRequest)",
      description:
        "Takes the hook input as Claude Code sends it and holds the call until a person answers, then replies with hook JSON. " +
        "No answer in time, a dropped request, storage that stays unavailable or a failure inside the relay is a 200 deny, never an error Claude Code would ignore. " +
        "A call held longer than RELAY_HOOK_KEEPALIVE (default 15 s) gets its 200 started then and a space every interval before the JSON, so idle-timeout proxies keep it open. " +
        "An instance shutting down denies new calls, saying it is restarting, unless the caller says it retries (503 then). " +
        "A token at its pending cap or over its create rate gets a 200 deny saying so (relay_too_many_pending's or relay_rate_limited's message).",
      requestParams: {
        query: z.object({
          timeout: z.int().min(MIN_HOOK_TIMEOUT_SECONDS).max(MAX_HOOK_TIMEOUT_SECONDS).optional().meta({
            description: "The hook's own `timeout` (seconds): the relay denies a few seconds before it. Default: RELAY_HOOK_TIMEOUT.",
          }),
          channel: SlackChannelId.optional().meta({ description: "Where to ask; default: SLACK_DEFAULT_CHANNEL." }),
          requestedBy: z
            .string()
            .optional()
            .meta({
              description:
                "Who the tool call is for: a Slack user id (U0123ABCD) or an email the relay resolves; with the route's `selfApproval: deny` they may not answer it. " +
                "A caller that retries gets 503 relay_slack_unavailable when Slack cannot resolve the email; Claude Code gets a deny.",
              example: "U0123ABCD",
            }),
        }),
        header: requestId.extend({
          [RETRIES_UNAVAILABLE_HEADER]: z.literal("1").optional().meta({
            description:
              "The caller retries a 503 itself (the client library does; Claude Code does not): an instance shutting down answers 503 relay_shutting_down instead of a deny.",
          }),
        }),
      },
      requestBody: { required: true, content: json(ClaudeCodeHookInput) },
      responses: {
        "200": { description: "The hook JSON for the event.", content: json(z.union([PreToolUseOutput, PermissionRequestOutput])) },
        ...refusals,
        ...agentOnly,
        ...bodyRefusals,
        "503": {
          ...error(
            `\`relay_shutting_down\` or \`relay_slack_unavailable\`, only for a caller that sends \`${RETRIES_UNAVAILABLE_HEADER}: 1\`: this instance is shutting down, or Slack could not resolve \`requestedBy\`; retry after \`Retry-After\` seconds.`,
          ),
          headers: z.object({ "Retry-After": z.string().meta({ description: "Seconds to wait before trying again.", example: "1" }) }),
        },
      },
    },
  };
}
