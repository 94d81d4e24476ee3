/**
 * What the MCP tools need of the relay, and nothing more, so the same tools
 * run inside the relay (POST /mcp, over its RequestService) and in a local
 * `approval-relay mcp` process (over the client library, RELAY_URL /
 * RELAY_TOKEN). Each side implements this port; the tools never know which.
 */
import type { z } from "zod";
import type { CreateRequestBody } from "../protocol/request-body.js";
import type { CreatedRequest, RequestView } from "../protocol/request-view.js";

/** A request body as an agent writes it (fields with defaults may be left out); the relay validates it. */
export type McpRequestBody = z.input<typeof CreateRequestBody>;

export interface McpRelay {
  /** Creates a request, or, under `idempotencyKey`, joins the one the same token made with that key. */
  create(body: McpRequestBody, idempotencyKey?: string): Promise<CreatedRequest>;
  /** The request once it has ended; rejects when `signal` aborts first. */
  untilEnded(id: string, signal: AbortSignal): Promise<RequestView>;
  /** The request once it has ended or after `waitMs`, whichever comes first. */
  check(id: string, waitMs: number, signal: AbortSignal): Promise<RequestView>;
  /** Cancels a pending request, best effort; its Slack message shows `reason`. */
  cancel(id: string, reason: string): Promise<void>;
  /** Why a call above failed, in a sentence an agent (and the model) can act on. */
  failureReason(error: unknown): string;
}
