/**
 * The web console's HTTP side (docs/console.md): the page and its assets,
 * sign-in through a single-use link, and a JSON API with a live stream of
 * changes (server-sent events) for the page. Thin: every answer goes
 * through the RequestService exactly as a Slack click does (approvers, user
 * groups, quorum and veto, self-approval, rules), as the signed-in person
 * with `via: "console"`, so the audit log says where it came from.
 *
 * Everything under /console sits in one Fastify scope with
 * @fastify/helmet (CSP without inline script, no framing) and
 * @fastify/cookie; each call is checked against the Host allowlist first,
 * and every state-changing call against Origin and the session's CSRF
 * token (./guard.ts, ./sessions.ts).
 */
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyCookie from "@fastify/cookie";
import fastifyHelmet from "@fastify/helmet";
import fastifyStatic from "@fastify/static";
import type { FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { Logger } from "../logger.js";
import { Decision } from "../protocol/decisions.js";
import { invalidRequest, RelayError } from "../requests/errors.js";
import { resolveInteractiveAnswers } from "../requests/interactive.js";
import { toView, type RequestRecord } from "../requests/model.js";
import type { RequestListing } from "../requests/listing.js";
import type { Answerer } from "../requests/policy.js";
import type { AnswerResult, RequestService } from "../requests/service.js";
import { jsonBody, type HttpApp } from "../http/transport.js";
import { allowedHosts, hostAllowed, originAllowed } from "./guard.js";
import { csrfMatches, type ConsoleSession, type ConsoleSessions } from "./sessions.js";

export const SESSION_COOKIE = "relay_console";
export const CSRF_HEADER = "x-csrf-token";

export interface ConsoleDeps {
  service: RequestService;
  listing: RequestListing;
  sessions: ConsoleSessions;
  logger: Logger;
  /** RELAY_PUBLIC_URL: its host is allowed besides the loopback names. */
  publicUrl?: string;
  /** The built page (scripts/build.mjs → dist/console); default: found from this module up to the package root. */
  assetsDir?: string;
  /** Most requests one list returns (pending and ended each). */
  listLimit?: number;
}

declare module "fastify" {
  interface FastifyRequest {
    /** The console session of the call (routes that need one). */
    consoleSession?: ConsoleSession;
  }
}

const SignIn = z.object({ secret: z.string().min(1).max(200) });
const AnswerBody = z.object({ decision: z.unknown() }).strict();
/** Decisions whose shape the console may send; the service checks them against the request's kind. */
const InteractiveAnswers = z.object({ answers: z.record(z.string(), z.union([z.string(), z.array(z.string()), z.boolean()])) });

/** Registers /console and /console/api/* on `app` (call before the app's 405 routes). */
export function registerConsoleRoutes(app: HttpApp, deps: ConsoleDeps): void {
  const hosts = () => allowedHosts((app.server.address() as AddressInfo).port, deps.publicUrl);
  const limit = deps.listLimit ?? 1000;
  const assets = deps.assetsDir ?? findAssets();

  void app.register(async (scope) => {
    await scope.register(fastifyCookie);
    await scope.register(fastifyHelmet, {
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          imgSrc: ["'self'"],
          connectSrc: ["'self'"],
          objectSrc: ["'none'"],
          baseUri: ["'none'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
        },
      },
      crossOriginEmbedderPolicy: false,
    });
    if (assets) await scope.register(fastifyStatic, { root: assets, prefix: "/console/assets/", index: false, wildcard: true, serve: true });
    else scope.get("/console/assets/*", notBuilt);

    // Host first: a rebinding page never reaches a route.
    scope.addHook("onRequest", async (request) => {
      if (!hostAllowed(request.headers.host, hosts())) throw new RelayError("relay_forbidden", "This Host is not one the console answers to.");
    });

    const page = async (request: FastifyRequest, reply: FastifyReply) => {
      if (!assets) return notBuilt(request);
      return reply.header("cache-control", "no-store").sendFile("index.html");
    };
    scope.get("/console", page);
    scope.get("/console/signin", page);

    /** The session of the call, or 401; state-changing calls also need Origin and the CSRF token. */
    const session = (changes: boolean) => async (request: FastifyRequest) => {
      if (changes && !originAllowed(request.headers.origin, hosts())) throw new RelayError("relay_forbidden", "Cross-site calls are refused.");
      const found = deps.sessions.get(request.cookies[SESSION_COOKIE]);
      if (!found) throw new RelayError("relay_unauthorized", "Sign in to the console first: open the sign-in link the relay printed.");
      const sent = request.headers[CSRF_HEADER];
      if (changes && !csrfMatches(found, typeof sent === "string" ? sent : undefined)) {
        throw new RelayError("relay_forbidden", "The CSRF token is missing or wrong: reload the console.");
      }
      request.consoleSession = found;
    };

    scope.post("/console/api/signin", async (request, reply) => {
      if (!originAllowed(request.headers.origin, hosts())) throw new RelayError("relay_forbidden", "Cross-site calls are refused.");
      const body = parse(SignIn, jsonBody(request));
      const opened = deps.sessions.redeem(body.secret);
      if (!opened) throw new RelayError("relay_unauthorized", "This sign-in link was used already or has expired: restart the relay for a new one.");
      deps.logger.info({ person: opened.person.id }, "console: signed in");
      void reply.setCookie(SESSION_COOKIE, opened.id, {
        httpOnly: true,
        sameSite: "strict",
        path: "/console",
        maxAge: Math.floor(deps.sessions.sessionTtlMs / 1000),
        secure: request.protocol === "https",
      });
      return { person: opened.person, csrf: opened.csrf };
    });

    scope.get("/console/api/session", { onRequest: session(false) }, async (request) => {
      const { person, csrf, expiresAt } = request.consoleSession!;
      return { person, csrf, expiresAt: new Date(expiresAt).toISOString(), slack: deps.service.withSlack };
    });

    scope.get("/console/api/requests", { onRequest: session(false) }, async () => {
      const records = await deps.listing.list({ tokenName: "", role: "admin" }, { limit });
      return {
        pending: records.filter((r) => r.status === "pending").map(consoleView),
        ended: records.filter((r) => r.status !== "pending").map(consoleView),
      };
    });

    scope.get<{ Params: { id: string } }>("/console/api/requests/:id", { onRequest: session(false) }, async (request) => {
      const record = await deps.service.get(request.params.id);
      if (!record) throw new RelayError("relay_not_found", "No such request.");
      return consoleView(record);
    });

    scope.post<{ Params: { id: string } }>("/console/api/requests/:id/answer", { onRequest: session(true) }, async (request, reply) => {
      const person = answerer(request.consoleSession!);
      const { decision: sent } = parse(AnswerBody, jsonBody(request));
      const record = await deps.service.get(request.params.id);
      if (!record) throw new RelayError("relay_not_found", "No such request.");
      const decision = decisionFor(record, sent);
      const result = await deps.service.answer(record.id, decision, person, record);
      return answered(reply, result);
    });

    scope.post<{ Params: { id: string } }>("/console/api/requests/:id/allow-for-a-while", { onRequest: session(true) }, async (request, reply) => {
      const grant = await deps.service.allowForAWhile(request.params.id, answerer(request.consoleSession!));
      return answered(reply, grant.answer);
    });

    scope.post<{ Params: { id: string } }>("/console/api/requests/:id/more-time", { onRequest: session(true) }, async (request, reply) => {
      const result = await deps.service.extend(request.params.id, answerer(request.consoleSession!));
      if (result.outcome === "applied") deps.service.changed(result.record.id);
      if (result.outcome === "no_more_time") return reply.code(409).send({ error: { code: "relay_already_ended", message: result.reason } });
      return answered(reply, result);
    });

    scope.get("/console/api/events", { onRequest: session(false) }, (request, reply) => {
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-content-type-options": "nosniff",
      });
      res.write("retry: 1000\n\n");
      const send = (id: string) => {
        void deps.service.get(id).then(
          (record) => {
            if (record && !res.writableEnded) res.write(`event: request\ndata: ${JSON.stringify(consoleView(record))}\n\n`);
          },
          (error: unknown) => deps.logger.warn({ id, error }, "console: reading a changed request failed"),
        );
      };
      const stop = deps.service.onChange(send);
      // A comment every 15 s keeps proxies from cutting an idle stream.
      const keepalive = setInterval(() => res.write(": keepalive\n\n"), 15_000);
      const end = () => {
        stop();
        clearInterval(keepalive);
        if (!res.writableEnded) res.end();
      };
      request.raw.once("close", end);
      app.server.once("close", end);
    });
  });
}

async function notBuilt(_request: FastifyRequest): Promise<never> {
  throw new RelayError("relay_not_found", "The console page is not built: run npm run build.");
}

/** The request as the console shows it: the API's view, its body, channel, token and when it ended. */
export function consoleView(record: RequestRecord) {
  return {
    ...toView(record),
    body: record.body,
    channel: record.channel,
    token: record.tokenName,
    ...(record.endedAt === undefined ? {} : { endedAt: new Date(record.endedAt).toISOString() }),
    ...(record.cancelledBy === undefined ? {} : { cancelledBy: record.cancelledBy }),
  };
}

function answerer(session: ConsoleSession): Answerer {
  return { ...session.person, via: "console" };
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(result.error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })));
  return result.data;
}

/** The decision as the service takes it: checked against Decision, and for InteractiveQuestion forms as the Slack modal checks them (required, pattern, defaults). */
function decisionFor(record: RequestRecord, sent: unknown): Decision {
  if (record.body.kind === "interactive_questions") {
    const { answers } = parse(InteractiveAnswers, sent);
    const resolved = resolveInteractiveAnswers(record.body, answers);
    if (!resolved.ok) throw invalidRequest(Object.entries(resolved.errors).map(([id, message]) => ({ path: `decision.answers.${id}`, message })));
    return resolved.decision;
  }
  const decision = parse(Decision, sent);
  if (record.body.kind === "permission" && "behavior" in decision && decision.behavior === "deny" && decision.message.trim() === "") {
    throw invalidRequest([{ path: "decision.message", message: "say why, or leave the reason out" }]);
  }
  return decision;
}

/** 200 with the request when the answer applied or counted; 403 refused; 409 already ended; 404 unknown. */
function answered(reply: FastifyReply, result: AnswerResult | { outcome: "not_found" } | { outcome: "applied" | "already_ended"; record: RequestRecord }) {
  switch (result.outcome) {
    case "not_found":
      throw new RelayError("relay_not_found", "No such request.");
    case "refused":
      return reply
        .code(403)
        .send({ error: { code: "relay_forbidden", message: `You may not answer this request: ${result.refusal.reason}.`, details: result.refusal } });
    case "already_ended":
      return reply.code(409).send({ error: { code: "relay_already_ended", message: "This request has ended already.", details: consoleView(result.record) } });
    default:
      return { outcome: result.outcome, request: consoleView(result.record) };
  }
}

/** dist/console under the package root (the folder with package.json above this module, in src/, dist/ or the bundle). */
function findAssets(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    if (existsSync(join(dir, "package.json"))) {
      const assets = join(dir, "dist", "console");
      return existsSync(join(assets, "index.html")) ? assets : undefined;
    }
    dir = dirname(dir);
  }
  return undefined;
}
