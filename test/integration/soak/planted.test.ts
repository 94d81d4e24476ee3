/**
 * The chaos soak's checker catches a broken promise in a real run: the soak
 * with a planted bug (the callback receiver loses a callback, as a relay
 * that never sent it would look) must fail and name it. Half a minute of the
 * same faults, with questions timing out after 10–20 s instead of 15–40 s so
 * the run ends soon after its traffic does (a Redis restart or a Slack
 * outage still fits inside each question's time; below 10 s, hook calls
 * start to be denied for an outage before anything is stored); the planted
 * callback's agent stops waiting as soon as it is lost.
 */
import { describe, expect, it } from "vitest";
import { soak } from "../../helpers/soak.js";

describe("the chaos soak with a planted fault", () => {
  it("fails, naming the request, when a callback is lost", { timeout: 420_000 }, async () => {
    const { code, output } = await soak(["--minutes", "0.5", "--plant", "drop-callback", "--timeouts", "10-20"]);
    expect(output, output).toMatch(/Chaos soak, 0\.5 min, seed \d+: \d+ requests/);
    expect(output, output).toMatch(/callback soak-[0-9a-f-]+: no callback arrived for /);
    expect(code, output).toBe(1);
  });
});
