/**
 * `GET /metrics`: the relay's Prometheus metrics (./../metrics.ts) in the
 * text format. With METRICS_TOKEN set the scraper sends it as
 * `Authorization: Bearer <token>` (checked when the request arrives, in
 * constant time; 401 in the relay's error shape otherwise); without it the
 * route is open, like /healthz, and belongs on an internal port.
 */
import { RelayError } from "../../requests/errors.js";
import { serveRoute } from "../api.js";
import { createTokenCheck, type AuthHook } from "../auth.js";
import type { RelayMetrics } from "../metrics.js";
import type { HttpApp } from "../transport.js";

export interface MetricsRouteDeps {
  metrics: Pick<RelayMetrics, "contentType" | "expose">;
  /** METRICS_TOKEN; none → no token asked. */
  token?: string;
}

export function registerMetricsRoute(app: HttpApp, { metrics, token }: MetricsRouteDeps): void {
  serveRoute(app, "metrics", { onRequest: token === undefined ? [] : [metricsAuth(token)] }, async (_request, reply) => {
    const text = await metrics.expose();
    return reply.type(metrics.contentType).send(text);
  });
}

function metricsAuth(token: string): AuthHook {
  const carriesToken = createTokenCheck(token);
  return (request, _reply, done) =>
    done(
      carriesToken(request.headers.authorization) ? undefined : new RelayError("relay_unauthorized", "Send METRICS_TOKEN as 'Authorization: Bearer <token>'."),
    );
}
