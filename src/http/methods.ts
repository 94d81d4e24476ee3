/**
 * 405 with `Allow` for every method a path was not given, as the relay has
 * always answered (Fastify alone answers 404). The paths' methods are
 * collected as routes are registered; the refusing routes are added last,
 * for every method Node parses (Fastify knows only a few), and refuse when
 * the request arrives, before its body is read.
 */
import { METHODS } from "node:http";
import { checkListed } from "./api.js";
import { methodNotAllowed } from "./errors.js";
import type { HttpApp } from "./transport.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Set on the routes that answer 405: the methods the path does take. */
    allow?: readonly string[];
  }
}

/** The methods of every path, in the order they are registered (HEAD routes Fastify adds left out); each must be in the route list (./api.ts). */
export function routesByPath(app: HttpApp): Map<string, string[]> {
  const declared = new Map<string, string[]>();
  app.addHook("onRoute", (route) => {
    if (route.config?.allow !== undefined) return;
    const methods = declared.get(route.url) ?? [];
    for (const method of [route.method].flat()) {
      checkListed(method, route.url);
      if (method !== "HEAD") methods.push(method);
    }
    declared.set(route.url, methods);
  });
  return declared;
}

/** Call once every route is registered: `Allow` lists a path's methods, HEAD where GET is. */
export function refuseOtherMethods(app: HttpApp, declared: Map<string, string[]>): void {
  for (const method of METHODS) {
    if (method !== "CONNECT" && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  void app.register(async (scope) => {
    for (const [url, methods] of declared) {
      const allow = methods.includes("GET") ? [...methods, "HEAD"] : methods;
      const refuse = async () => {
        throw methodNotAllowed(allow);
      };
      scope.route({ method: app.supportedMethods.filter((m) => !allow.includes(m)), url, config: { allow }, onRequest: refuse, handler: refuse });
    }
  });
}
