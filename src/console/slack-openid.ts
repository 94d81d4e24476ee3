/**
 * Sign in with Slack for the web console (docs/console.md): Slack's OpenID
 * Connect code flow, done by openid-client (panva's certified relying party)
 * rather than by hand. Slack publishes no discovery document under
 * SLACK_API_URL, so the server's metadata is written out here: the standard
 * authorize page beside the Web API (`<origin>/openid/connect/authorize`),
 * and `openid.connect.token` and `openid.connect.userInfo` under
 * SLACK_API_URL, so a proxy, GovSlack or a test's stand-in serves all three.
 *
 * openid-client checks what matters: the `state` the browser came back with
 * against the one sent (and kept, with the nonce, in the relay's store under
 * the state's SHA-256 for 10 minutes, used once, so the callback may land
 * on any instance: src/requests/sign-ins.ts), the ID token's `nonce`, issuer, audience and
 * expiry, and that userInfo speaks of the same subject. The ID token comes
 * straight from Slack's token endpoint over TLS in answer to our client
 * secret, so its signature is not checked against Slack's keys (OpenID
 * Connect Core 3.1.3.7; openid-client's default). @fastify/oauth2 was not
 * used: it does OAuth 2 only (no nonce, no ID token checks).
 */
import * as oidc from "openid-client";
import { TooManySignInsError } from "../requests/errors.js";
import { answererIn, type Answerer } from "../requests/policy.js";
import { signInDigest, type SignInStore } from "../requests/sign-ins.js";

export interface SlackOpenIdOptions {
  clientId: string;
  clientSecret: string;
  /** SLACK_API_URL, ending in "/". */
  apiUrl: string;
  /** RELAY_PUBLIC_URL: the redirect URL is `<publicUrl>/console/signin/slack/callback`. */
  publicUrl: string;
  /** Where started sign-ins wait for Slack's callback: the relay's store (memory, or Redis for every instance). */
  store: SignInStore;
  /** Unix time in milliseconds. */
  now?: () => number;
  /** How long a started sign-in may come back (ms); default 10 minutes. */
  pendingTtlMs?: number;
}

/** Where Slack sends the browser back to, under RELAY_PUBLIC_URL. */
export const CALLBACK_PATH = "/console/signin/slack/callback";
/** The scopes asked for: who the person is (the manifest lists them as user scopes). */
const SCOPES = "openid profile";
/** The claims Slack adds for the person's user and workspace ids. */
const USER_ID_CLAIM = "https://slack.com/user_id";
const TEAM_ID_CLAIM = "https://slack.com/team_id";

/** Why a sign-in failed, as the person is told (never a token or a code). */
export class SignInRefused extends Error {
  override readonly name = "SignInRefused";
}

export class SlackOpenId {
  private readonly config: oidc.Configuration;
  private readonly redirectUri: string;
  private readonly store: SignInStore;
  private readonly now: () => number;
  private readonly pendingTtlMs: number;

  constructor(options: SlackOpenIdOptions) {
    const api = new URL(options.apiUrl);
    this.config = new oidc.Configuration(
      {
        issuer: api.origin,
        authorization_endpoint: new URL("/openid/connect/authorize", api).href,
        token_endpoint: new URL("openid.connect.token", api).href,
        userinfo_endpoint: new URL("openid.connect.userInfo", api).href,
      },
      options.clientId,
      options.clientSecret,
    );
    // Only a stand-in on this machine speaks plain HTTP (a test's, or a local proxy): Slack itself is HTTPS.
    if (api.protocol === "http:") oidc.allowInsecureRequests(this.config);
    this.redirectUri = `${options.publicUrl}${CALLBACK_PATH}`;
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.pendingTtlMs = options.pendingTtlMs ?? 10 * 60_000;
  }

  /** A new sign-in: Slack's authorize URL to send the browser to, and its state (the browser keeps it in a cookie too). */
  async start(): Promise<{ url: string; state: string }> {
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const now = this.now();
    // The store holds a bounded number (anyone who reaches the relay may start one), over every instance on Redis.
    if (!(await this.store.put("slack", signInDigest(state), { nonce, expiresAt: now + this.pendingTtlMs }, now))) throw new TooManySignInsError("slack");
    const url = oidc.buildAuthorizationUrl(this.config, { redirect_uri: this.redirectUri, scope: SCOPES, state, nonce });
    return { url: url.href, state };
  }

  /**
   * Finishes the sign-in Slack sent the browser back from (`query`: the
   * callback's query string) for the browser that started it (`cookieState`):
   * the code is exchanged once, the nonce and the subject checked; the person
   * is the Slack user, placed in their workspace.
   */
  async finish(query: string, cookieState: string | undefined): Promise<Answerer> {
    const params = new URLSearchParams(query);
    const state = params.get("state") ?? "";
    // Used up whatever follows: a state comes back once.
    const started = state === "" ? undefined : await this.store.take("slack", signInDigest(state), this.now());
    if (!started || cookieState !== state) {
      throw new SignInRefused("This sign-in was not started in this browser, was used already or took too long: sign in again.");
    }
    if (params.has("error")) throw new SignInRefused(`Slack did not sign you in (${params.get("error")}).`);
    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(this.config, new URL(`${this.redirectUri}?${params}`), {
        expectedState: state,
        expectedNonce: started.nonce,
      });
      const idClaims = tokens.claims()!;
      claims = { ...(await oidc.fetchUserInfo(this.config, tokens.access_token, idClaims.sub)), ...idClaims };
    } catch (error) {
      throw new SignInRefused(`Slack's answer did not check out (${(error as Error).message}): sign in again.`, { cause: error });
    }
    const id = typeof claims[USER_ID_CLAIM] === "string" ? claims[USER_ID_CLAIM] : claims.sub;
    if (typeof id !== "string" || !/^[UW][A-Z0-9]{2,}$/.test(id)) throw new SignInRefused("Slack named no user: sign in again.");
    const team = claims[TEAM_ID_CLAIM];
    // Placed in their workspace as a Slack click is: a guest from another one is checked as such.
    return answererIn({ id, ...(typeof claims.name === "string" ? { name: claims.name } : {}) }, typeof team === "string" ? team : undefined);
  }
}
