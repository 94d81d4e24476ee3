/**
 * "Allow for a while" rules over HTTP (docs/architecture.md §7): `GET /v1/rules` lists the
 * live ones, newest first, and `DELETE /v1/rules/{id}` revokes one. An admin
 * token sees and revokes every rule (revoking only takes a permission away,
 * so it is no write admin tokens are kept from); an agent token only the
 * rules of its own token. Another token's rule is not found, exactly as an
 * unknown id, so its existence does not leak. Thin: parse, call the
 * service's RuleBook, render.
 */
import type { FastifyRequest } from "fastify";
import { RULE_LIMITS, type RuleList, type RuleView } from "../../protocol/operator.js";
import type { RuleBook } from "../../requests/rule-book.js";
import { toRuleView } from "../../requests/rules.js";
import { serveRoute } from "../api.js";
import type { AuthHook } from "../auth.js";
import { notFound } from "../errors.js";
import { parseLimit, queryParams } from "../query.js";
import { rawQuery, type HttpApp } from "../transport.js";

/** Longer ids are never issued; they are not found without asking the store. */
const MAX_ID_LENGTH = 200;

export interface RuleRoutesDeps {
  /** The service's rules; none → no rule is listed and every id is unknown. */
  rules: Pick<RuleBook, "list" | "revoke"> | undefined;
  /** Either kind of token. */
  authenticate: AuthHook;
}

type IdRoute = { Params: { id: string } };

export function registerRuleRoutes(app: HttpApp, { rules, authenticate }: RuleRoutesDeps): void {
  serveRoute(app, "listRules", { onRequest: authenticate }, async (request): Promise<RuleList> => {
    const limit = parseLimit(queryParams(rawQuery(request), ["limit"]).get("limit"), { max: RULE_LIMITS.max, fallback: RULE_LIMITS.default });
    const found = rules ? await rules.list({ limit, ...ownToken(request) }) : [];
    return { rules: found.map(toRuleView) };
  });

  serveRoute<IdRoute>(app, "revokeRule", { onRequest: authenticate }, async (request): Promise<RuleView> => {
    const { id } = request.params;
    const revoked = id.length > MAX_ID_LENGTH || !rules ? undefined : await rules.revoke(id, { token: request.agent }, ownToken(request));
    if (!revoked) throw notFound("The rule");
    return toRuleView(revoked);
  });
}

/** An agent token's own rules only; an admin token's, all. */
function ownToken(request: FastifyRequest): { token?: string } {
  return request.tokenRole === "admin" ? {} : { token: request.agent };
}
