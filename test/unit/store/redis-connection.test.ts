/**
 * The bounded call every Redis store method goes through: what it tells the
 * outage listener (the relay's relay_store_errors_total) and what it does not;
 * and the reconnect schedule of the store's connections.
 */
import { describe, expect, it } from "vitest";
import { StoreUnavailableError } from "../../../src/requests/errors.js";
import { bounded, commandConnectionOptions, reconnectDelay } from "../../../src/store/redis-connection.js";

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

describe("the reconnect schedule", () => {
  it("waits 50 ms more after each failed attempt, at most 2 s: calls work again within about 2 s of Redis or a new master coming back", () => {
    expect([1, 2, 10, 39, 40, 41, 1000].map(reconnectDelay)).toEqual([50, 100, 500, 1950, 2000, 2000, 2000]);
    expect(commandConnectionOptions(2000).retryStrategy).toBe(reconnectDelay);
  });
});
