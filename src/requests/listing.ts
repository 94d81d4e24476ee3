/**
 * Who sees which requests (docs/architecture.md §7): an admin token (an operator) every
 * request, an agent token only the ones it created; and the list of them,
 * newest first, that `GET /v1/requests` returns. Another token's request is
 * to an agent token as if it did not exist.
 */
import type { TokenRole } from "./vocabulary.js";
import type { RequestStatus } from "../protocol/request-view.js";
import type { RequestRecord } from "./model.js";
import type { RequestStore } from "./store.js";

/** The token asking. */
export interface Viewer {
  tokenName: string;
  role: TokenRole;
}

export interface ListOptions {
  /** Only requests in this status; absent → any. */
  status?: RequestStatus;
  /** Most requests returned. */
  limit: number;
}

/** Whether `viewer` may see `record`. */
export function mayView(viewer: Viewer, record: Pick<RequestRecord, "tokenName">): boolean {
  return viewer.role === "admin" || record.tokenName === viewer.tokenName;
}

export class RequestListing {
  constructor(private readonly store: Pick<RequestStore, "listRequests">) {}

  /** The requests `viewer` may see (pending, or ended within the retention), newest first. */
  list(viewer: Viewer, { status, limit }: ListOptions): Promise<RequestRecord[]> {
    return this.store.listRequests({
      limit,
      ...(status === undefined ? {} : { status }),
      ...(viewer.role === "admin" ? {} : { tokenName: viewer.tokenName }),
    });
  }
}
