/**
 * The web console's ways in (docs/console.md, security model), each ending
 * in the same session cookie: the single-use link local mode prints, Sign
 * in with Slack (./slack-openid.ts; the Slack user is who every answer is
 * checked as), and an admin token (RELAY_ADMIN_TOKENS), which opens a
 * read-only view. Every POST here checks Origin first, like every other
 * state-changing console call; no secret ever travels in a query string
 * (the link's is in its fragment, the admin token in a POST body; Slack's
 * one-time code and state come back in the callback's query, as OAuth has
 * them, and are worth nothing without the client secret and the browser's
 * state cookie).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import type { NamedToken } from "../config/rules.js";
import { createAuthenticator } from "../http/auth.js";
import { jsonBody, rawQuery } from "../http/transport.js";
import type { Logger } from "../logger.js";
import { RelayError } from "../requests/errors.js";
import { originAllowed } from "./guard.js";
import type { ConsoleSession, ConsoleSessions } from "./sessions.js";
import { CALLBACK_PATH, SignInRefused, type SlackOpenId } from "./slack-openid.js";
import { parse, SESSION_COOKIE } from "./wire.js";

/** Carries a Slack sign-in's state between the start and the callback, in this browser only. */
const STATE_COOKIE = "relay_console_signin";

export interface SignInDeps {
  sessions: ConsoleSessions;
  logger: Logger;
  /** Sign in with Slack; absent → off. */
  slack?: SlackOpenId;
  /** RELAY_ADMIN_TOKENS: each opens a read-only session. */
  adminTokens: readonly NamedToken[];
  /** Whether sign-in links exist (local mode prints one). */
  links: boolean;
  /** The allowed origins (./guard.ts allowedOrigins), for the Origin check. */
  origins: () => ReadonlySet<string>;
}

const LinkSignIn = z.object({ secret: z.string().min(1).max(200) }).strict();
const AdminSignIn = z.object({ token: z.string().min(1).max(1024) }).strict();

export function registerSignInRoutes(scope: FastifyInstance, deps: SignInDeps): void {
  const admins = createAuthenticator({ agents: [], admins: deps.adminTokens });
  const sameOrigin = async (request: FastifyRequest) => {
    if (!originAllowed(request.headers.origin, deps.origins())) throw new RelayError("relay_forbidden", "Cross-site calls are refused.");
  };
  const opened = (request: FastifyRequest, reply: FastifyReply, session: ConsoleSession) => {
    deps.logger.info({ person: session.person.id, role: session.role }, "console: signed in");
    void reply.setCookie(SESSION_COOKIE, session.id, {
      httpOnly: true,
      sameSite: "strict",
      path: "/console",
      maxAge: Math.floor(deps.sessions.sessionTtlMs / 1000),
      secure: request.protocol === "https",
    });
  };

  scope.get("/console/api/signin", async () => ({ link: deps.links, slack: deps.slack !== undefined, admin: deps.adminTokens.length > 0 }));

  scope.post("/console/api/signin", { onRequest: sameOrigin }, async (request, reply) => {
    const body = parse(LinkSignIn, jsonBody(request));
    const session = await deps.sessions.redeem(body.secret);
    if (!session) throw new RelayError("relay_unauthorized", "This sign-in link was used already or has expired: restart the relay for a new one.");
    opened(request, reply, session);
    return { person: session.person, role: session.role, csrf: session.csrf };
  });

  scope.post("/console/api/signin/admin", { onRequest: sameOrigin }, async (request, reply) => {
    const body = parse(AdminSignIn, jsonBody(request));
    let name: string;
    try {
      ({ name } = admins(`Bearer ${body.token}`));
    } catch {
      throw new RelayError("relay_unauthorized", "This is not one of the relay's admin tokens (RELAY_ADMIN_TOKENS).");
    }
    const session = await deps.sessions.open({ id: `admin:${name}`, name: `${name} (admin token, read-only)` }, "viewer");
    opened(request, reply, session);
    return { person: session.person, role: session.role, csrf: session.csrf };
  });

  scope.get("/console/signin/slack", async (_request, reply) => {
    const slack = signInWithSlack(deps);
    const started = await refusedAs403(() => slack.start());
    void reply.setCookie(STATE_COOKIE, started.state, {
      httpOnly: true,
      // Slack sends the browser back with a top-level GET from its own site: Strict would drop the cookie.
      sameSite: "lax",
      path: "/console/signin/slack",
      maxAge: 600,
      secure: new URL(started.url).protocol === "https:",
    });
    return reply.header("cache-control", "no-store").redirect(started.url, 303);
  });

  scope.get(CALLBACK_PATH, async (request, reply) => {
    const slack = signInWithSlack(deps);
    void reply.clearCookie(STATE_COOKIE, { path: "/console/signin/slack" });
    const person = await refusedAs403(() => slack.finish(rawQuery(request), request.cookies[STATE_COOKIE]), deps.logger);
    opened(request, reply, await deps.sessions.open(person, "answerer"));
    return reply.header("cache-control", "no-store").redirect("/console", 303);
  });
}

function signInWithSlack(deps: SignInDeps): SlackOpenId {
  if (!deps.slack) throw new RelayError("relay_not_found", "Sign in with Slack is off: set SLACK_CLIENT_ID, SLACK_CLIENT_SECRET and RELAY_PUBLIC_URL.");
  return deps.slack;
}

/** The step's result; a SignInRefused becomes a 403 with its reason (logged). */
async function refusedAs403<T>(step: () => Promise<T>, logger?: Logger): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (!(error instanceof SignInRefused)) throw error;
    logger?.warn({ reason: error.message }, "console: Sign in with Slack refused");
    throw new RelayError("relay_forbidden", error.message);
  }
}
