/**
 * RELAY_CALLBACK_HOSTS matching: exact host names, case and a trailing dot
 * ignored; no suffix, prefix or port tricks get through.
 */
import { describe, expect, it } from "vitest";
import { callbackHostAllowed } from "../../../src/requests/callback-hosts.js";

const HOSTS = ["hooks.example.com", "CI.Internal", "::1"];

describe("callback host allowlist", () => {
  it("allows a listed host whatever the scheme, port, path, query or letter case", () => {
    for (const url of [
      "https://hooks.example.com/relay",
      "http://HOOKS.example.COM:8443/a?b=c#d",
      "https://hooks.example.com./relay",
      "https://ci.internal/x",
      "http://[::1]:9000/cb",
    ]) {
      expect(callbackHostAllowed(url, HOSTS), url).toBe(true);
    }
  });

  it("refuses subdomains, look-alike suffixes, user-info tricks and unlisted hosts", () => {
    for (const url of [
      "https://evil.hooks.example.com/relay",
      "https://hooks.example.com.evil.io/relay",
      "https://hooks.example.co/relay",
      "https://hooks.example.com@evil.io/relay",
      "https://example.com/relay",
      "http://127.0.0.1/relay",
      "not a url",
    ]) {
      expect(callbackHostAllowed(url, HOSTS), url).toBe(false);
    }
  });

  it("allows any host when no list is set, and none when the list is empty", () => {
    expect(callbackHostAllowed("https://anything.example.org/x", undefined)).toBe(true);
    expect(callbackHostAllowed("https://hooks.example.com/x", [])).toBe(false);
  });
});
