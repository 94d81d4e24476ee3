/**
 * Who sees which requests: an admin token every request, an agent token only
 * its own, by id and in the list (the store is asked for the token's own).
 */
import { describe, expect, it } from "vitest";
import { mayView, RequestListing } from "../../../src/requests/listing.js";
import type { ListQuery } from "../../../src/requests/store.js";

describe("mayView", () => {
  it("an agent token sees the requests it created, and no other token's", () => {
    expect(mayView({ tokenName: "ci-bot", role: "agent" }, { tokenName: "ci-bot" })).toBe(true);
    expect(mayView({ tokenName: "laptop", role: "agent" }, { tokenName: "ci-bot" })).toBe(false);
  });

  it("an admin token sees every request, even one created by a token of its own name", () => {
    expect(mayView({ tokenName: "ops", role: "admin" }, { tokenName: "ci-bot" })).toBe(true);
  });
});

describe("RequestListing", () => {
  function listing() {
    const asked: ListQuery[] = [];
    return { asked, listing: new RequestListing({ listRequests: async (query) => (asked.push(query), []) }) };
  }

  it("asks the store for an agent token's own requests", async () => {
    const { asked, listing: list } = listing();
    await list.list({ tokenName: "ci-bot", role: "agent" }, { status: "pending", limit: 5 });
    expect(asked).toStrictEqual([{ status: "pending", tokenName: "ci-bot", limit: 5 }]);
  });

  it("asks the store for every request for an admin token", async () => {
    const { asked, listing: list } = listing();
    await list.list({ tokenName: "ops", role: "admin" }, { limit: 100 });
    expect(asked).toStrictEqual([{ limit: 100 }]);
  });
});
