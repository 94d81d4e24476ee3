/**
 * The web console's HTTP side (docs/console.md): the page and its assets,
 * sign-in (./signin-routes.ts), and a JSON API with a live stream of
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
import { isDeepStrictEqual } from "node:util";
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
import type { RequestRecord } from "../requests/model.js";
import type { RequestListing } from "../requests/listing.js";
import type { Answerer } from "../requests/policy.js";
import type { AnswerResult, RequestService } from "../requests/service.js";
import type { NamedToken } from "../config/rules.js";
import { auditPage } from "../http/routes/audit.js";
import { jsonBody, rawQuery, type HttpApp } from "../http/transport.js";
import type { AuditTrail } from "../requests/audit-trail.js";
import { allowedHosts, allowedOrigins, hostAllowed, originAllowed } from "./guard.js";
import { csrfMatches, type ConsoleSession, type ConsoleSessions } from "./sessions.js";
import { ConsoleFeed } from "./feed.js";
import { registerSignInRoutes } from "./signin-routes.js";
import type { SlackOpenId } from "./slack-openid.js";
import { consoleView, CSRF_HEADER, offersOf, parse, SESSION_COOKIE, type MessageLink } from "./wire.js";

export interface ConsoleDeps {
  service: RequestService;
  listing: RequestListing;
  sessions: ConsoleSessions;
  logger: Logger;
  audit: Pick<AuditTrail, "read">;
  /** RELAY_PUBLIC_URL: its host is allowed besides the loopback names. */
  publicUrl?: string;
  /** Sign in with Slack; absent → off. */
  slackSignIn?: SlackOpenId;
  /** RELAY_ADMIN_TOKENS: each opens a read-only session. */
  adminTokens: readonly NamedToken[];
  /** Whether the relay prints sign-in links (local mode). */
  links: boolean;
  /** Links to requests' Slack messages (with Slack); resolves undefined while unknown. */
  messageLinks?: () => Promise<MessageLink | undefined>;
  /** The built page (scripts/build.mjs → dist/console-page); default: found from this module up to the package root. */
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

const AnswerBody = z.object({ decision: z.unknown() }).strict();
/** Decisions whose shape the console may send; the service checks them against the request's kind. */
const InteractiveAnswers = z.object({ answers: z.record(z.string(), z.union([z.string(), z.array(z.string()), z.boolean()])) });

/** Registers /console and /console/api/* on `app` (call before the app's 405 routes). */
export function registerConsoleRoutes(app: HttpApp, deps: ConsoleDeps): void {
  const hosts = () => allowedHosts((app.server.address() as AddressInfo).port, deps.publicUrl);
  const origins = () => allowedOrigins((app.server.address() as AddressInfo).port, deps.publicUrl);
  const limit = deps.listLimit ?? 1000;
  const linker = async () => (deps.messageLinks ? await deps.messageLinks() : undefined);
  const feed = new ConsoleFeed({
    onChange: (listener) => deps.service.onChange(listener),
    read: (id) => deps.service.get(id),
    render: async (record) => consoleView(record, await linker()),
    logger: deps.logger,
  });
  app.server.once("close", () => feed.close());
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

    /**
     * The session of the call, or 401. `changes`: a state-changing call, which also needs Origin and the
     * CSRF token; `answers`: one that acts on a request, refused to a read-only (admin token) session;
     * `audit`: the audit log, for read-only sessions and local mode's person only.
     */
    const session = (need: "reads" | "changes" | "answers" | "audit") => async (request: FastifyRequest) => {
      const changes = need === "changes" || need === "answers";
      if (changes && !originAllowed(request.headers.origin, origins())) throw new RelayError("relay_forbidden", "Cross-site calls are refused.");
      const found = await deps.sessions.get(request.cookies[SESSION_COOKIE]);
      if (!found) throw new RelayError("relay_unauthorized", "Sign in to the console first.");
      const sent = request.headers[CSRF_HEADER];
      if (changes && !csrfMatches(found, typeof sent === "string" ? sent : undefined)) {
        throw new RelayError("relay_forbidden", "The CSRF token is missing or wrong: reload the console.");
      }
      if (need === "answers" && found.role === "viewer")
        throw new RelayError("relay_forbidden", "An admin token opens a read-only console: it answers nothing.");
      if (need === "audit" && found.role !== "viewer" && !deps.links) throw new RelayError("relay_forbidden", "The audit log is for admin tokens.");
      request.consoleSession = found;
    };

    registerSignInRoutes(scope, {
      sessions: deps.sessions,
      logger: deps.logger,
      adminTokens: deps.adminTokens,
      links: deps.links,
      origins,
      ...(deps.slackSignIn ? { slack: deps.slackSignIn } : {}),
    });

    scope.post("/console/api/signout", { onRequest: session("changes") }, async (request, reply) => {
      await deps.sessions.end(request.cookies[SESSION_COOKIE]!);
      void reply.clearCookie(SESSION_COOKIE, { path: "/console" });
      return { signedOut: true };
    });

    scope.get("/console/api/session", { onRequest: session("reads") }, async (request) => {
      const { person, role, csrf, expiresAt } = request.consoleSession!;
      return { person, role, csrf, expiresAt: new Date(expiresAt).toISOString(), slack: deps.service.withSlack };
    });

    scope.get("/console/api/audit", { onRequest: session("audit") }, async (request) => auditPage(deps.audit, rawQuery(request)));

    scope.get("/console/api/requests", { onRequest: session("reads") }, async () => {
      const [records, link] = await Promise.all([deps.listing.list({ tokenName: "", role: "admin" }, { limit }), linker()]);
      return {
        pending: records.filter((r) => r.status === "pending").map((r) => consoleView(r, link)),
        ended: records.filter((r) => r.status !== "pending").map((r) => consoleView(r, link)),
      };
    });

    scope.get<{ Params: { id: string } }>("/console/api/requests/:id", { onRequest: session("reads") }, async (request) => {
      const record = await deps.service.getExpiringIfOverdue(request.params.id);
      if (!record) throw new RelayError("relay_not_found", "No such request.");
      return consoleView(record, await linker());
    });

    scope.post<{ Params: { id: string } }>("/console/api/requests/:id/answer", { onRequest: session("answers") }, async (request, reply) => {
      const person = answerer(request.consoleSession!);
      const { decision: sent } = parse(AnswerBody, jsonBody(request));
      const record = await deps.service.get(request.params.id);
      if (!record) throw new RelayError("relay_not_found", "No such request.");
      const decision = decisionFor(record, sent);
      const result = await deps.service.answer(record.id, decision, person);
      return answered(reply, result, await linker());
    });

    scope.post<{ Params: { id: string } }>("/console/api/requests/:id/allow-for-a-while", { onRequest: session("answers") }, async (request, reply) => {
      const grant = await deps.service.allowForAWhile(request.params.id, answerer(request.consoleSession!));
      return answered(reply, grant.answer, await linker());
    });

    scope.post<{ Params: { id: string } }>("/console/api/requests/:id/more-time", { onRequest: session("answers") }, async (request, reply) => {
      const result = await deps.service.extend(request.params.id, answerer(request.consoleSession!));
      if (result.outcome === "no_more_time") return reply.code(409).send({ error: { code: "relay_already_ended", message: result.reason } });
      return answered(reply, result, await linker());
    });

    scope.get("/console/api/events", { onRequest: session("reads") }, (_request, reply) => {
      reply.hijack();
      feed.add(reply.raw);
    });
  });
}

async function notBuilt(_request: FastifyRequest): Promise<never> {
  throw new RelayError("relay_not_found", "The console page is not built: run npm run build.");
}

function answerer(session: ConsoleSession): Answerer {
  return { ...session.person, via: "console" };
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
  if (record.body.kind !== "permission" || !("behavior" in decision)) return decision;
  if (decision.behavior === "deny" && decision.message.trim() === "") {
    throw invalidRequest([{ path: "decision.message", message: "say why, or leave the reason out" }]);
  }
  // Only what the Slack message offers: Edit… where it has one, Always allow with exactly the rules it grants.
  if (decision.behavior === "allow") {
    const offers = offersOf(record);
    if (!offers.edit && !isDeepStrictEqual(decision.updatedInput, record.body.input)) {
      throw invalidRequest([{ path: "decision.updatedInput", message: "this request offers no Edit…: allow the input as asked" }]);
    }
    if (decision.updatedPermissions !== undefined && !isDeepStrictEqual(decision.updatedPermissions, offers.alwaysAllow)) {
      throw invalidRequest([{ path: "decision.updatedPermissions", message: "only the rules Always allow offers on this request (offers.alwaysAllow)" }]);
    }
  }
  return decision;
}

/** 200 with the request when the answer applied or counted; 403 refused; 409 already ended; 404 unknown. */
function answered(
  reply: FastifyReply,
  result: AnswerResult | { outcome: "not_found" } | { outcome: "applied" | "already_ended"; record: RequestRecord },
  link: MessageLink | undefined,
) {
  switch (result.outcome) {
    case "not_found":
      throw new RelayError("relay_not_found", "No such request.");
    case "refused":
      return reply
        .code(403)
        .send({ error: { code: "relay_forbidden", message: `You may not answer this request: ${result.refusal.reason}.`, details: result.refusal } });
    case "already_ended":
      return reply
        .code(409)
        .send({ error: { code: "relay_already_ended", message: "This request has ended already.", details: consoleView(result.record, link) } });
    default:
      return { outcome: result.outcome, request: consoleView(result.record, link) };
  }
}

/** dist/console-page under the package root (the folder with package.json above this module, in src/, dist/ or the bundle). */
function findAssets(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    if (existsSync(join(dir, "package.json"))) {
      const assets = join(dir, "dist", "console-page");
      return existsSync(join(assets, "index.html")) ? assets : undefined;
    }
    dir = dirname(dir);
  }
  return undefined;
}
