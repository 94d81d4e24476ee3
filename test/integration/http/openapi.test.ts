/**
 * The OpenAPI document of the agent API: generated from the zod schemas,
 * valid OpenAPI 3.1, the same as the openapi.json clients are generated
 * from, and served at GET /openapi.json without a token.
 */
import { readFileSync } from "node:fs";
import { validate } from "@readme/openapi-parser";
import { afterEach, describe, expect, it } from "vitest";
import { openApiPath, ROUTES } from "../../../src/http/api.js";
import { ConsoleSessions } from "../../../src/console/sessions.js";
import { createMemorySignInStore } from "../../../src/store/memory-sign-ins.js";
import { RelayMetrics } from "../../../src/http/metrics.js";
import { openApiDocument, openApiText } from "../../../src/http/openapi.js";
import { startApiRelay, type ApiRelay } from "../../helpers/api-relay.js";

const committed = readFileSync(new URL("../../../openapi.json", import.meta.url), "utf8");

let relay: ApiRelay | undefined;
afterEach(async () => {
  await relay?.close();
  relay = undefined;
});

describe("the OpenAPI document", () => {
  it("openapi.json in the repository is the one the schemas generate (run `npm run openapi` after changing a schema)", () => {
    expect(committed).toBe(openApiText());
  });

  it("is valid OpenAPI 3.1", async () => {
    const result = await validate(structuredClone(openApiDocument()) as Parameters<typeof validate>[0]);
    expect(result).toMatchObject({ valid: true, specification: "OpenAPI" });
    expect(openApiDocument().openapi).toBe("3.1.0");
  });

  it("describes every agent route, the error shape and bearer authentication, with health open to all and metrics behind METRICS_TOKEN when set", () => {
    const document = openApiDocument();
    const operations = Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
      Object.keys(item ?? {}).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual([
      "DELETE /v1/requests/{id}",
      "DELETE /v1/rules/{id}",
      "GET /healthz",
      "GET /metrics",
      "GET /readyz",
      "GET /v1/audit",
      "GET /v1/requests",
      "GET /v1/requests/{id}",
      "GET /v1/rules",
      "POST /v1/hooks/claude-code",
      "POST /v1/requests",
    ]);
    expect(document.components?.securitySchemes).toEqual({
      bearerAuth: expect.objectContaining({ type: "http", scheme: "bearer" }),
      metricsToken: expect.objectContaining({ type: "http", scheme: "bearer" }),
    });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    expect(document.paths?.["/healthz"]?.get?.security).toEqual([]);
    expect(document.paths?.["/metrics"]?.get?.security).toEqual([{ metricsToken: [] }, {}]);
    expect(document.components?.schemas?.ErrorReply).toMatchObject({
      properties: { error: { properties: { code: { type: "string" }, message: { type: "string" } }, required: ["code", "message"] } },
    });
    const created = document.paths?.["/v1/requests"]?.post?.responses;
    expect(Object.keys(created ?? {}).sort()).toEqual(["200", "201", "400", "401", "403", "405", "409", "413", "415", "429", "500", "503"]);
    expect(JSON.stringify(document.components?.schemas?.CreateRequestBody)).toContain('"title":"InteractiveQuestionsBody"');
  });

  it("lists the documented routes of the route list (src/http/api.ts), each at its method and path with its name as operationId, and the relay serves every route of the list", async () => {
    const operations = Object.entries(openApiDocument().paths ?? {}).flatMap(([path, item]) =>
      Object.entries(item ?? {}).map(([method, operation]) => [(operation as { operationId: string }).operationId, `${method.toUpperCase()} ${path}`]),
    );
    const documented = Object.entries(ROUTES).filter(([, route]) => !("undocumented" in route));
    expect(operations).toEqual(documented.map(([name, { method, path }]) => [name, `${method} ${openApiPath(path)}`]));

    relay = await startApiRelay({
      metrics: new RelayMetrics(),
      http: { slackListener: () => undefined, console: { sessions: new ConsoleSessions({ store: createMemorySignInStore() }), links: true } },
    });
    const unserved = Object.values(ROUTES).filter(({ method, path }) => !relay!.app.hasRoute({ method, url: path }));
    expect(unserved).toEqual([]);
  });

  it("is served at GET /openapi.json without a token, exactly as committed", async () => {
    relay = await startApiRelay();
    const response = await relay.call("/openapi.json", { as: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(response.body).toEqual(JSON.parse(committed));
  });
});
