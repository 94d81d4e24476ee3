/**
 * Liveness and readiness for load balancers and orchestrators; no auth.
 * /healthz says the process serves HTTP. /readyz asks the store and Slack and
 * answers 503 when either is down, or when the check itself fails or hangs,
 * with one line per reason (in Socket Mode, a connection that is down says
 * why and when it is tried next). The store is asked on every probe (a PING, bounded
 * to 1 s); Slack's answer is cached for about 10 s (src/slack/app.ts).
 * Once the instance drains (SIGTERM), /readyz answers 503 "shutting_down" at
 * once, without asking anything, so load balancers stop sending it work.
 */
import { z } from "zod";
import type { Logger } from "../../logger.js";
import { settleBefore } from "../../protocol/timing.js";
import { serveRoute } from "../api.js";
import type { HttpApp } from "../transport.js";

export const Readiness = z.object({ store: z.boolean(), slack: z.boolean() });
export type Readiness = z.infer<typeof Readiness>;
/** What the relay's checks say: Readiness, and when Slack is down for a reason the relay knows (Socket Mode), that reason. */
export type ReadinessCheck = Readiness & { slackProblem?: string };

/** GET /healthz. */
export const HealthReply = z.object({ status: z.literal("ok") });
/** GET /readyz, 200 or 503. */
export const ReadinessReply = z.object({
  status: z.enum(["ready", "not_ready", "shutting_down"]),
  checks: Readiness.optional().meta({ description: "Absent while shutting down: nothing is asked then." }),
  reasons: z.array(z.string()).optional().meta({ description: "Why the relay is not ready: one line per check that failed." }),
});

/** What each failed check means for the relay's users. */
export const NOT_READY_REASONS = {
  store:
    "store: the store (Redis) does not answer; agent API calls answer 503 relay_store_unavailable and held Claude Code hook calls are denied at their deadline until it does",
  slack: "slack: Slack does not accept the bot token or cannot be reached (auth.test)",
  check: "the readiness check itself failed or took longer than 5 s",
} as const;

export interface HealthRoutesDeps {
  readiness: () => Promise<ReadinessCheck>;
  /** true once the instance drains before stopping (SIGTERM). */
  draining?: () => boolean;
  logger: Logger;
}

/** How long /readyz waits for the checks before it calls the relay not ready (ms). */
const READINESS_TIMEOUT_MS = 5_000;
const NOT_CHECKED: Readiness = Object.freeze({ store: false, slack: false });

export function registerHealthRoutes(app: HttpApp, { readiness, draining = () => false, logger }: HealthRoutesDeps): void {
  serveRoute(app, "health", {}, async (): Promise<z.infer<typeof HealthReply>> => ({ status: "ok" }));

  serveRoute(app, "readiness", {}, async (_request, reply): Promise<z.infer<typeof ReadinessReply>> => {
    if (draining()) {
      reply.code(503);
      return { status: "shutting_down" };
    }
    const checks = await checkWithin(readiness, READINESS_TIMEOUT_MS, logger);
    const ready = checks.store && checks.slack;
    reply.code(ready ? 200 : 503);
    if (ready) return { status: "ready", checks: { store: checks.store, slack: checks.slack } };
    const reasons: string[] = checks === NOT_CHECKED ? [NOT_READY_REASONS.check] : [];
    if (!checks.store) reasons.push(NOT_READY_REASONS.store);
    if (!checks.slack) reasons.push(checks.slackProblem === undefined ? NOT_READY_REASONS.slack : `slack: ${checks.slackProblem}`);
    return { status: "not_ready", checks: { store: checks.store, slack: checks.slack }, reasons };
  });
}

async function checkWithin(readiness: () => Promise<ReadinessCheck>, ms: number, logger: Logger): Promise<ReadinessCheck> {
  try {
    const checks = await settleBefore<ReadinessCheck>(readiness(), { ms }, () => {
      logger.warn({ ms }, "readiness check timed out");
      return NOT_CHECKED;
    });
    if (checks === NOT_CHECKED) return checks;
    return { store: checks.store === true, slack: checks.slack === true, ...(checks.slackProblem === undefined ? {} : { slackProblem: checks.slackProblem }) };
  } catch (error) {
    logger.warn({ error }, "readiness check failed");
    return NOT_CHECKED;
  }
}
