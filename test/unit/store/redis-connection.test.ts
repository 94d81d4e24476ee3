/**
 * The bounded call every Redis store method goes through: what it tells the
 * outage listener (the relay's relay_store_errors_total) and what it does not.
 */
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { bounded } from "../../../src/store/redis-connection.js";

function listener() {
  const heard: StoreUnavailableError[] = [];
  return { heard, onUnavailable: (error: StoreUnavailableError) => void heard.push(error) };
}

describe("bounded store calls", () => {
  it("a call that outlives the bound fails with StoreUnavailableError, and the listener hears of it once", async () => {
    const { heard, onUnavailable } = listener();
    await expect(bounded("counts", 20, new Promise(() => {}), onUnavailable)).rejects.toThrow(StoreUnavailableError);
    expect(heard).toHaveLength(1);
    expect(heard[0]?.reason).toBe("Redis did not answer counts within 20 ms");
  });

  it("an outage the call itself reports reaches the listener as it is", async () => {
    const { heard, onUnavailable } = listener();
    const outage = new StoreUnavailableError("Redis GET failed: Connection is closed.");
    await expect(bounded("get", 1000, Promise.reject(outage), onUnavailable)).rejects.toBe(outage);
    expect(heard).toStrictEqual([outage]);
  });

  it("neither an answer nor another error (a bug, an unreadable record) is an outage", async () => {
    const { heard, onUnavailable } = listener();
    expect(await bounded("get", 1000, Promise.resolve("ok"), onUnavailable)).toBe("ok");
    await expect(bounded("get", 1000, Promise.reject(new TypeError("bug")), onUnavailable)).rejects.toThrow(TypeError);
    expect(heard).toStrictEqual([]);
  });
});
