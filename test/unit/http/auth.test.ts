import { describe, expect, it } from "vitest";
import { createAuthenticator, createTokenCheck } from "../../../src/http/auth.js";
import { RelayError } from "../../../src/requests/errors.js";

const authenticate = createAuthenticator({
  agents: [
    { name: "ci-bot", token: "tok_ci_0123456789abcdef0123" },
    { name: "laptop", token: "tok_laptop_fedcba9876543210" },
  ],
  admins: [{ name: "ops", token: "tok_ops_00112233445566778899" }],
});

function refusal(header: string | undefined) {
  try {
    authenticate(header);
  } catch (error) {
    if (error instanceof RelayError) return error.code;
    throw error;
  }
  return "accepted";
}

describe("bearer authentication", () => {
  it("names the token the header carries and its role", () => {
    expect(authenticate("Bearer tok_ci_0123456789abcdef0123")).toEqual({ name: "ci-bot", role: "agent" });
    expect(authenticate("Bearer tok_laptop_fedcba9876543210")).toEqual({ name: "laptop", role: "agent" });
    expect(authenticate("Bearer tok_ops_00112233445566778899")).toEqual({ name: "ops", role: "admin" });
  });

  it("accepts the scheme in any case, as RFC 7235 allows", () => {
    expect(authenticate("bearer tok_laptop_fedcba9876543210")).toEqual({ name: "laptop", role: "agent" });
  });

  it.each([
    ["no header", undefined],
    ["an empty header", ""],
    ["an unknown token", "Bearer tok_unknown_0000000000000"],
    ["a prefix of a token", "Bearer tok_ci_0123456789abcdef012"],
    ["a prefix of an admin token", "Bearer tok_ops_0011223344556677889"],
    ["a token with more after it", "Bearer tok_ci_0123456789abcdef0123x"],
    ["another scheme", "Basic dG9rX2NpXzAxMjM0NTY3ODlhYmNkZWYwMTIz"],
    ["the bare token", "tok_ci_0123456789abcdef0123"],
    ["two tokens", "Bearer tok_ci_0123456789abcdef0123 tok_laptop_fedcba9876543210"],
    ["a huge token", `Bearer ${"a".repeat(100_000)}`],
  ])("refuses %s", (_name, header) => {
    expect(refusal(header)).toBe("relay_unauthorized");
  });

  it("refuses everything when no token is configured", () => {
    expect(() => createAuthenticator({ agents: [], admins: [] })("Bearer tok_ci_0123456789abcdef0123")).toThrow(RelayError);
  });
});

describe("a route's own token (METRICS_TOKEN)", () => {
  const carriesToken = createTokenCheck("metrics-scraper-0123456789abcdef");

  it("takes the token as a bearer token, the scheme in any case", () => {
    expect(carriesToken("Bearer metrics-scraper-0123456789abcdef")).toBe(true);
    expect(carriesToken("bearer metrics-scraper-0123456789abcdef")).toBe(true);
  });

  it.each([
    ["no header", undefined],
    ["another token", "Bearer metrics-scraper-0123456789abcdeX"],
    ["a prefix of it", "Bearer metrics-scraper"],
    ["it with more after it", "Bearer metrics-scraper-0123456789abcdef0"],
    ["it without a scheme", "metrics-scraper-0123456789abcdef"],
    ["it as Basic credentials", "Basic metrics-scraper-0123456789abcdef"],
    ["a token longer than any may be", `Bearer ${"x".repeat(2000)}`],
  ])("refuses %s", (_case, header) => {
    expect(carriesToken(header)).toBe(false);
  });
});
