/**
 * Sign in with Slack's side of the Slack stand-in (./slack-web-api.ts): the
 * authorize page (which signs in whoever the test chose, at once, as Slack
 * does for a person already signed in), `openid.connect.token` (checks the
 * client, the code and the redirect URL; answers with an RS256 ID token
 * carrying the nonce and Slack's user and team claims) and
 * `openid.connect.userInfo` (the same person, for the access token).
 */
import { createSign, generateKeyPairSync, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

export const CLIENT_ID = "1111111111.2222222222";
export const CLIENT_SECRET = "0123456789abcdef0123456789abcdef";

export interface SlackPerson {
  id: string;
  name: string;
  teamId: string;
}

export interface OpenIdStandIn {
  /** Who the authorize page signs in from now on. */
  signInAs(person: SlackPerson): void;
  /** The next ID token is made wrong this way (once). */
  spoilNext(how: "nonce" | "audience" | "expired"): void;
  /** Answers `req` when it is one of Sign in with Slack's; false when it is another Web API call. */
  handle(req: IncomingMessage, res: ServerResponse, args: Record<string, unknown>, origin: string): boolean;
}

export function openIdStandIn(): OpenIdStandIn {
  const { privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  let person: SlackPerson = { id: "U0APPROVER", name: "Ada Approver", teamId: "T0TEAM" };
  let spoil: "nonce" | "audience" | "expired" | undefined;
  const codes = new Map<string, { nonce: string; redirectUri: string; person: SlackPerson }>();
  const accessTokens = new Map<string, SlackPerson>();

  const idToken = (issuer: string, who: SlackPerson, nonce: string) => {
    const now = Math.floor(Date.now() / 1000);
    const how = spoil;
    spoil = undefined;
    const claims = {
      iss: issuer,
      sub: who.id,
      aud: how === "audience" ? "9999999999.9999999999" : CLIENT_ID,
      iat: now - (how === "expired" ? 7200 : 0),
      exp: now + (how === "expired" ? -3600 : 300),
      nonce: how === "nonce" ? "another-nonce" : nonce,
      name: who.name,
      "https://slack.com/user_id": who.id,
      "https://slack.com/team_id": who.teamId,
    };
    const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const signed = `${part({ alg: "RS256", typ: "JWT" })}.${part(claims)}`;
    return `${signed}.${createSign("RSA-SHA256").update(signed).sign(privateKey).toString("base64url")}`;
  };
  const json = (res: ServerResponse, body: object) => res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));

  return {
    signInAs: (who) => {
      person = who;
    },
    spoilNext: (how) => {
      spoil = how;
    },
    handle: (req, res, args, origin) => {
      const url = new URL(req.url ?? "/", origin);
      if (url.pathname === "/openid/connect/authorize") {
        const q = url.searchParams;
        const redirectUri = q.get("redirect_uri");
        if (q.get("client_id") !== CLIENT_ID || q.get("response_type") !== "code" || !q.get("scope")?.split(" ").includes("openid") || !redirectUri) {
          res.writeHead(400).end("bad authorize request");
          return true;
        }
        const code = randomBytes(12).toString("hex");
        codes.set(code, { nonce: q.get("nonce") ?? "", redirectUri, person });
        const back = new URL(redirectUri);
        back.searchParams.set("code", code);
        back.searchParams.set("state", q.get("state") ?? "");
        res.writeHead(302, { location: back.href }).end();
        return true;
      }
      if (url.pathname === "/api/openid.connect.token") {
        const grant = codes.get(String(args.code));
        codes.delete(String(args.code));
        if (args.client_id !== CLIENT_ID || args.client_secret !== CLIENT_SECRET) return (json(res, { ok: false, error: "invalid_client_id" }), true);
        if (!grant || grant.redirectUri !== args.redirect_uri) return (json(res, { ok: false, error: "invalid_code" }), true);
        const accessToken = `xoxp-${randomBytes(12).toString("hex")}`;
        accessTokens.set(accessToken, grant.person);
        json(res, { ok: true, access_token: accessToken, token_type: "Bearer", id_token: idToken(origin, grant.person, grant.nonce) });
        return true;
      }
      if (url.pathname === "/api/openid.connect.userInfo") {
        const who = accessTokens.get(String(req.headers.authorization).replace(/^Bearer /, ""));
        if (!who) return (json(res, { ok: false, error: "invalid_auth" }), true);
        json(res, { ok: true, sub: who.id, "https://slack.com/user_id": who.id, "https://slack.com/team_id": who.teamId, name: who.name });
        return true;
      }
      return false;
    },
  };
}
