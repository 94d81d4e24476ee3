/**
 * The relay's real HTTP app (Fastify) on 127.0.0.1:0 with a real RequestService, for
 * the HTTP tests. The store is the memory store unless one is injected (the
 * same tests run against Redis that way); every create that reaches it is
 * counted, so a test can prove that a refused request changed nothing. Slack
 * is a fake RequestMessenger that records what it was asked to do: the Slack
 * side has its own tests. An admin token (ADMIN_TOKENS) and a memory audit
 * log (or the one injected) serve the operator routes; RelayMetrics, when
 * given, count what it does and serve GET /metrics.
 */
import { afterEach, expect } from "vitest";
import type { Server } from "node:http";
import type { AgentToken } from "../../src/config/config.js";
import type { Route } from "../../src/requests/route-schema.js";
import type { RelayMetrics } from "../../src/http/metrics.js";
import { DEFAULT_BODY_LIMIT_BYTES, type HttpDeps } from "../../src/http/server.js";
import type { HttpApp } from "../../src/http/transport.js";
import { createLogger } from "../../src/logger.js";
import type { AuditLog } from "../../src/requests/audit.js";
import type { AuditTrail } from "../../src/requests/audit-trail.js";
import type { PeopleDirectory } from "../../src/requests/directory.js";
import type { RequestPolicy, RequestRecord } from "../../src/requests/model.js";
import { DEFAULT_POLICY, type RequestService } from "../../src/requests/service.js";
import { buildRelay } from "../../src/main.js";
import { createMemoryAuditLog } from "../../src/store/memory-audit.js";
import { createMemoryStore } from "../../src/store/memory-store.js";
import { createMemoryRuleStore } from "../../src/store/memory-rules.js";
import type { RuleStore } from "../../src/requests/rules.js";
import { FakeMessenger } from "./fake-messenger.js";
import type { RequestStore } from "../../src/requests/store.js";
import { relayConfig } from "./relay-config.js";

export const TOKENS: AgentToken[] = [
  { name: "ci-bot", token: "tok_ci_0123456789abcdef0123" },
  { name: "laptop", token: "tok_laptop_fedcba9876543210" },
];
/** Read-only operator tokens (RELAY_ADMIN_TOKENS). */
export const ADMIN_TOKENS: AgentToken[] = [{ name: "ops", token: "tok_ops_00112233445566778899" }];
export const DEFAULT_CHANNEL = "C0123456789";

export interface ApiRelayOptions {
  /** Defaults to a fresh memory store. */
  store?: RequestStore;
  /** Where "Allow for a while" rules live; defaults to a fresh memory rule store. */
  rules?: RuleStore;
  tokens?: AgentToken[];
  /** Defaults to ADMIN_TOKENS. */
  adminTokens?: AgentToken[];
  /** Defaults to a fresh memory audit log. */
  auditLog?: AuditLog;
  defaultTimeoutSeconds?: number;
  /** RELAY_CALLBACK_HOSTS; undefined → any host. */
  callbackHosts?: readonly string[];
  /** The config file's approver routes and the default route's `channels`. */
  routes?: Route[];
  defaultChannels?: string[];
  /** The default route's policy (RequestServiceDeps.policy). */
  policy?: RequestPolicy;
  /** Slack's people, for requestedBy emails and approvers narrowed to group members; none → such requests get 503. */
  directory?: PeopleDirectory;
  /** Counts what the relay does and serves GET /metrics (METRICS_TOKEN: `http.metricsToken`); none → no /metrics. */
  metrics?: RelayMetrics;
  http?: Partial<Omit<HttpDeps, "service" | "tokens" | "adminTokens" | "hookCalls" | "metrics" | "listing" | "audit" | "logger">>;
}

export interface ApiRelay {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  app: HttpApp;
  /** The Node server under Fastify. */
  server: Server;
  service: RequestService;
  /** The trail GET /v1/audit reads; tests record events into it. */
  audit: AuditTrail;
  messenger: FakeMessenger;
  /** Records that reached `store.create`, in order. */
  stored: RequestRecord[];
  /** Every log line the relay wrote. */
  logs: string[];
  /** Every response `call` received: status line, headers and body as text. */
  responses: string[];
  tokens: AgentToken[];
  /** fetch against the relay as the token named `as`, an agent's or an admin's (default: the first agent token). */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read reply fields freely; the relay's replies are checked by their assertions
  call(path: string, init?: CallInit): Promise<{ status: number; headers: Headers; body: any }>;
  close(): Promise<void>;
}

export interface CallInit {
  method?: string;
  json?: unknown;
  /** Raw body; sent with Content-Type application/json unless headers say otherwise. */
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Token name, or null to send no Authorization header. */
  as?: string | null;
  signal?: AbortSignal;
}

export async function startApiRelay(options: ApiRelayOptions = {}): Promise<ApiRelay> {
  const tokens = options.tokens ?? TOKENS;
  const adminTokens = options.adminTokens ?? ADMIN_TOKENS;
  const logs: string[] = [];
  const logger = createLogger({ level: "debug", write: (line) => logs.push(line) });
  const stored: RequestRecord[] = [];
  const responses: string[] = [];
  const store = counting(options.store ?? createMemoryStore(), stored);
  await store.ready();
  const messenger = new FakeMessenger();
  const auditLog = options.auditLog ?? createMemoryAuditLog({ maxEvents: 10_000 });
  const rules = options.rules ?? createMemoryRuleStore();
  const config = relayConfig(
    { SLACK_DEFAULT_CHANNEL: DEFAULT_CHANNEL },
    {
      tokens,
      adminTokens,
      defaultTimeoutSeconds: options.defaultTimeoutSeconds ?? 600,
      // Creates and hook calls get the one body limit these tests set, unless they set RELAY_MAX_BODY's apart.
      maxBodyBytes: options.http?.agentBodyLimitBytes ?? options.http?.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES,
      callbackHosts: options.callbackHosts && [...options.callbackHosts],
      routes: options.routes ?? [],
      ...(options.defaultChannels ? { defaultChannels: options.defaultChannels } : {}),
      ...(options.policy ? { defaultPolicy: options.policy, alwaysAllow: options.policy.alwaysAllow ?? DEFAULT_POLICY.alwaysAllow } : {}),
    },
  );
  const relay = await buildRelay(config, {
    logger,
    store,
    auditLog,
    ruleStore: rules,
    slack: { messenger, ...(options.directory ? { directory: options.directory } : {}) },
    ...(options.metrics ? { metrics: options.metrics } : {}),
    // Without `metrics` the HTTP app is built without them: no GET /metrics.
    http: { metrics: options.metrics, ...options.http },
  });
  const { service, audit, http: app } = relay;
  const url = await relay.listen(0, "127.0.0.1");
  const { server } = app;

  async function call(path: string, init: CallInit = {}) {
    const headers: Record<string, string> = {};
    const as = init.as === undefined ? tokens[0]!.name : init.as;
    if (as !== null) headers.authorization = `Bearer ${[...tokens, ...adminTokens].find((t) => t.name === as)!.token}`;
    const body = init.json !== undefined ? JSON.stringify(init.json) : init.body;
    if (body !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(url + path, {
      method: init.method ?? (body === undefined ? "GET" : "POST"),
      headers: { ...headers, ...init.headers },
      body,
      signal: init.signal,
    });
    const text = await response.text();
    responses.push(`${response.status} ${JSON.stringify([...response.headers])} ${text}`);
    return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  }

  return {
    url,
    app,
    server,
    service,
    audit,
    messenger,
    stored,
    logs,
    responses,
    tokens,
    call,
    async close() {
      server.closeAllConnections();
      await relay.close();
      await auditLog.close();
      await rules.close();
      await store.close();
    },
  };
}

/** For a test file: `start(options)` starts a relay for the test calling it, closed after that test. */
export function useApiRelay(): (options?: ApiRelayOptions) => Promise<ApiRelay> {
  let relay: ApiRelay | undefined;
  afterEach(async () => {
    await relay?.close();
    relay = undefined;
  });
  return async (options = {}) => (relay = await startApiRelay(options));
}

/** A 400 relay_invalid_request whose details name `path` alone: what every bad query parameter gets. */
export function expectInvalidParameter(response: { status: number; body: { error: { code: string; details: unknown } } }, path: string): void {
  expect(response.status).toBe(400);
  expect(response.body.error.code).toBe("relay_invalid_request");
  expect(response.body.error.details).toStrictEqual([{ path, message: expect.any(String) }]);
}

/** The store, with every record that reaches `create` appended to `stored` (both stores are plain objects of closures). */
function counting(store: RequestStore, stored: RequestRecord[]): RequestStore {
  return {
    ...store,
    create: (record, options) => {
      stored.push(record);
      return store.create(record, options);
    },
  };
}

/** Realistic request bodies, one builder per kind, with overrides. */
export const bodies = {
  bashPermission: (over: Record<string, unknown> = {}) => ({
    kind: "permission",
    toolName: "Bash",
    input: { command: "npm run deploy -- --env production", description: "Deploy the web app to production" },
    suggestions: [{ type: "addRules", rules: [{ toolName: "Bash", ruleContent: "npm run deploy:*" }], behavior: "allow", destination: "localSettings" }],
    title: "Claude wants to run: npm run deploy -- --env production",
    displayName: "Bash",
    toolUseId: "toolu_01D7FLrfh4GYq7yT1ULFeyMV",
    agent: { name: "claude-code", sessionId: "5f1c2a9e-0b7d-4c1e-9a55-3f0e8f7d2c11", host: "build-7", cwd: "/srv/web" },
    timeoutSeconds: 300,
    ...over,
  }),
  stepGate: (over: Record<string, unknown> = {}) => ({
    kind: "step_gate",
    toolName: "Write",
    input: { file_path: "/srv/web/config/production.yml", content: "replicas: 4\nimage: web:1.2.3\n" },
    toolUseId: "toolu_01Hb9xQ3",
    ...over,
  }),
  askUserQuestion: (over: Record<string, unknown> = {}) => ({
    kind: "ask_user_question",
    questions: [
      {
        question: "Which database should the new service use?",
        header: "Database",
        options: [
          { label: "PostgreSQL", description: "Relational, already run by the platform team" },
          { label: "SQLite", description: "A file next to the service; no server" },
        ],
        multiSelect: false,
      },
      {
        question: "Which environments should get it first?",
        header: "Rollout",
        options: [
          { label: "staging", description: "Shared staging cluster" },
          { label: "canary", description: "5% of production traffic" },
          { label: "production", description: "Everyone" },
        ],
        multiSelect: true,
      },
    ],
    ...over,
  }),
  interactive: (over: Record<string, unknown> = {}) => ({
    kind: "interactive_questions",
    questions: [
      { id: "region", question: "Deploy to which region?", type: "choice", options: ["eu-west-1", "us-east-1"], default: "eu-west-1" },
      { id: "notify", question: "Notify #releases?", type: "confirm", default: true },
      { id: "ticket", question: "Change ticket?", type: "text", pattern: "^CHG-[0-9]+$", required: false },
      { id: "approver", question: "Who approves the rollout?", type: "text" },
    ],
    ...over,
  }),
};
