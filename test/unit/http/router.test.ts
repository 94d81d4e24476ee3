import { describe, expect, it } from "vitest";
import { Router } from "../../../src/http/router.js";

function router() {
  return new Router<string>()
    .add("GET", "/healthz", "health")
    .add("POST", "/v1/requests", "create")
    .add("GET", "/v1/requests/:id", "read")
    .add("DELETE", "/v1/requests/:id", "cancel");
}

describe("router", () => {
  it("finds a literal path by method", () => {
    expect(router().match("POST", "/v1/requests")).toEqual({ kind: "found", handler: "create", params: {} });
  });

  it("decodes path parameters", () => {
    expect(router().match("GET", "/v1/requests/abc%20def")).toEqual({ kind: "found", handler: "read", params: { id: "abc def" } });
  });

  it("answers method_not_allowed with every method of the path, HEAD included where GET is", () => {
    expect(router().match("PUT", "/v1/requests/abc")).toEqual({ kind: "method_not_allowed", allow: "GET, DELETE, HEAD" });
    expect(router().match("GET", "/v1/requests")).toEqual({ kind: "method_not_allowed", allow: "POST" });
  });

  it("serves HEAD with the GET handler", () => {
    expect(router().match("HEAD", "/healthz")).toMatchObject({ kind: "found", handler: "health" });
  });

  it("does not match unknown paths, extra segments, empty or undecodable parameters", () => {
    for (const path of ["/", "/v1", "/v1/requests/", "/v1/requests/a/b", "/v1/requests/%E0%A4%A", "/healthz/", "/HEALTHZ"]) {
      expect(router().match("GET", path), path).toEqual({ kind: "not_found" });
    }
  });

  it("refuses to register the same route twice", () => {
    expect(() => router().add("GET", "/v1/requests/:id", "again")).toThrow(/already registered/);
    expect(() => router().add("PATCH", "/v1/requests/:other", "renamed")).toThrow(/names its parameters differently/);
  });
});
