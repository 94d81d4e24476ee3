/**
 * Liveness and readiness for load balancers and orchestrators; no auth.
 * /healthz says the process serves HTTP. /readyz asks the store and Slack and
 * answers 503 when either is down, or when the check itself fails or hangs.
 * Once the instance drains (SIGTERM), /readyz answers 503 "shutting_down" at
 * once, without asking anything, so load balancers stop sending it work.
 */
import { z } from "zod";
import type { Logger } from "../../logger.js";
import { settleBefore } from "../../protocol/timing.js";
import type { HttpApp } from "../transport.js";

export const Readiness = z.object({ store: z.boolean(), slack: z.boolean() });
export type Readiness = z.infer<typeof Readiness>;

/** GET /healthz. */
export const HealthReply = z.object({ status: z.literal("ok") });
/** GET /readyz, 200 or 503. */
export const ReadinessReply = z.object({
  status: z.enum(["ready", "not_ready", "shutting_down"]),
  checks: Readiness.optional().meta({ description: "Absent while shutting down: nothing is asked then." }),
});

export interface HealthRoutesDeps {
  readiness: () => Promise<Readiness>;
  /** true once the instance drains before stopping (SIGTERM). */
  draining?: () => boolean;
  logger: Logger;
}

/** How long /readyz waits for the checks before it calls the relay not ready (ms). */
const READINESS_TIMEOUT_MS = 5_000;
const NOT_CHECKED: Readiness = Object.freeze({ store: false, slack: false });

export function registerHealthRoutes(app: HttpApp, { readiness, draining = () => false, logger }: HealthRoutesDeps): void {
  app.get("/healthz", async (): Promise<z.infer<typeof HealthReply>> => ({ status: "ok" }));

  app.get("/readyz", async (_request, reply): Promise<z.infer<typeof ReadinessReply>> => {
    if (draining()) {
      reply.code(503);
      return { status: "shutting_down" };
    }
    const checks = await checkWithin(readiness, READINESS_TIMEOUT_MS, logger);
    const ready = checks.store && checks.slack;
    reply.code(ready ? 200 : 503);
    return { status: ready ? "ready" : "not_ready", checks };
  });
}

async function checkWithin(readiness: () => Promise<Readiness>, ms: number, logger: Logger): Promise<Readiness> {
  try {
    const checks = await settleBefore(readiness(), { ms }, () => {
      logger.warn({ ms }, "readiness check timed out");
      return NOT_CHECKED;
    });
    return { store: checks.store === true, slack: checks.slack === true };
  } catch (error) {
    logger.warn({ error }, "readiness check failed");
    return NOT_CHECKED;
  }
}
