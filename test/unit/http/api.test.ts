/**
 * The route list (src/http/api.ts): the one place a route's method and path
 * are written. A route registered past it stops the server from being built,
 * so no route is served that the OpenAPI document does not list.
 */
import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { openApiPath, ROUTES } from "../../../src/http/api.js";
import { routesByPath } from "../../../src/http/methods.js";
import type { HttpApp } from "../../../src/http/transport.js";

describe("the route list", () => {
  it("refuses a route it does not list, naming it and where to add it", async () => {
    const app = Fastify() as unknown as HttpApp;
    routesByPath(app);
    expect(() => app.get("/v1/secret", async () => ({}))).toThrow("GET /v1/secret is not in the route list (src/http/api.ts)");
    expect(() => app.put(ROUTES.getRequest.path, async () => ({}))).toThrow(`PUT ${ROUTES.getRequest.path} is not in the route list`);
    await app.close();
  });

  it("takes a listed route, with the HEAD route Fastify adds for a GET", async () => {
    const app = Fastify() as unknown as HttpApp;
    const declared = routesByPath(app);
    app.get(ROUTES.health.path, async () => ({ status: "ok" }));
    expect(declared.get(ROUTES.health.path)).toEqual(["GET"]);
    await app.close();
  });

  it("writes a path parameter as OpenAPI does", () => {
    expect(openApiPath("/v1/requests/:id")).toBe("/v1/requests/{id}");
    expect(openApiPath("/v1/requests")).toBe("/v1/requests");
  });
});
