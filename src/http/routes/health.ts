/**
 * Liveness and readiness for load balancers and orchestrators; no auth.
 * /healthz says the process serves HTTP. /readyz asks the store and Slack and
 * answers 503 when either is down, or when the check itself fails or hangs.
 */
import type { Logger } from "../../logger.js";
import { settleBefore } from "../../protocol/timing.js";
import type { RouteTable } from "../route.js";

export interface Readiness {
  store: boolean;
  slack: boolean;
}

export interface HealthRoutesDeps {
  readiness: () => Promise<Readiness>;
  logger: Logger;
}

/** How long /readyz waits for the checks before it calls the relay not ready (ms). */
const READINESS_TIMEOUT_MS = 5_000;
const NOT_CHECKED: Readiness = Object.freeze({ store: false, slack: false });

export function registerHealthRoutes(router: RouteTable, { readiness, logger }: HealthRoutesDeps): void {
  router.add("GET", "/healthz", {
    auth: false,
    async handle() {
      return { status: 200, body: { status: "ok" } };
    },
  });

  router.add("GET", "/readyz", {
    auth: false,
    async handle() {
      const checks = await checkWithin(readiness, READINESS_TIMEOUT_MS, logger);
      const ready = checks.store && checks.slack;
      return { status: ready ? 200 : 503, body: { status: ready ? "ready" : "not_ready", checks } };
    },
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
