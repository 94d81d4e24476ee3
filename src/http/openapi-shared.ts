/**
 * What the operations of the OpenAPI document share: a schema as JSON
 * content, the error reply, the refusals every authenticated route may give,
 * the store's 503 and the X-Request-Id header. Apart from the operations
 * (./openapi-agent.ts, ./openapi-operator.ts) so that each stays small.
 */
import { z } from "zod";
import type { ZodOpenApiOperationObject, ZodOpenApiResponsesObject } from "zod-openapi";
import { ErrorReply } from "../protocol/request-view.js";
import type { DocumentedRoute } from "./api.js";

/** An operation of the document; its operationId is its route's name in the route list (./api.ts). */
export type Operation = Omit<ZodOpenApiOperationObject, "operationId">;
/** The operations of some of the documented routes, by name. */
export type Operations<K extends DocumentedRoute> = Record<K, Operation>;

export const json = (schema: z.ZodType) => ({ "application/json": { schema } });
export const error = (description: string) => ({ description, content: json(ErrorReply) });

/** The refusals every authenticated route may give. */
export const refusals = {
  "400": error("Invalid JSON, or the body or query refused by the schema; `details` lists `{path, message}` per field."),
  "401": {
    ...error("No token, or an unknown one."),
    headers: z.object({ "WWW-Authenticate": z.literal("Bearer") }),
  },
  "405": { ...error("Another method than the path takes."), headers: z.object({ Allow: z.string().meta({ example: "POST" }) }) },
  "500": error("A bug or an outage in the relay, never bad input; `details.requestId` is the reference in its log."),
} satisfies ZodOpenApiResponsesObject;
/** Every route that reads or changes a request in the store. */
export const storeRefusals = {
  "503": {
    ...error(
      "`relay_store_unavailable`: the relay's storage (Redis) did not answer within its bound (about 2 s). Try again after `Retry-After` seconds (repeating a create with its idempotency key is safe). " +
        "`relay_shutting_down`: this instance is shutting down (SIGTERM) and takes no new request or long-poll; the connection is closed, so a retry after `Retry-After` seconds reaches another instance.",
    ),
    headers: z.object({ "Retry-After": z.string().meta({ description: "Seconds to wait before trying again.", example: "2" }) }),
  },
} satisfies ZodOpenApiResponsesObject;
/** The routes where agents act (create, cancel, the hook). */
export const agentOnly = {
  "403": error("`relay_forbidden`: an admin token (RELAY_ADMIN_TOKENS); admin tokens only read. Send an agent token (RELAY_TOKENS)."),
} satisfies ZodOpenApiResponsesObject;
export const bodyRefusals = {
  "413": error("A body over the limit: 1 MB, or RELAY_MAX_BODY (default 16 MB) for creates and Claude Code hook calls."),
  "415": error("A body that is not `application/json` (or a `+json` type), or is compressed."),
} satisfies ZodOpenApiResponsesObject;

/** The X-Request-Id header every route takes. */
export const requestId = z.object({
  "X-Request-Id": z.string().optional().meta({ description: "Echoed back; a fresh id when absent or not a plain token of up to 128 characters." }),
});
