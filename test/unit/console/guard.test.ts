import { describe, expect, it } from "vitest";
import { allowedHosts, allowedOrigins, hostAllowed, originAllowed } from "../../../src/console/guard.js";

describe("the console's Host allowlist", () => {
  const hosts = allowedHosts(3000, "https://relay.example.com");

  it("takes the loopback names on the relay's port and the public URL's host", () => {
    for (const host of ["127.0.0.1:3000", "localhost:3000", "LOCALHOST:3000", "[::1]:3000", "relay.example.com"]) expect(hostAllowed(host, hosts)).toBe(true);
  });

  it("refuses another name, another port, and no Host at all", () => {
    for (const host of ["evil.example.com:3000", "127.0.0.1:3001", "localhost", "relay.example.com:444", "attacker.127.0.0.1.nip.io:3000"]) {
      expect(hostAllowed(host, hosts)).toBe(false);
    }
    expect(hostAllowed(undefined, hosts)).toBe(false);
  });
});

describe("the console's Origin check", () => {
  const hosts = allowedOrigins(3000);

  it("takes the console's own origin", () => {
    expect(originAllowed("http://127.0.0.1:3000", hosts)).toBe(true);
    expect(originAllowed("http://localhost:3000", hosts)).toBe(true);
  });

  it("refuses other sites, opaque and missing origins, and other schemes", () => {
    for (const origin of ["https://evil.example.com", "http://127.0.0.1:3001", "null", "file://", "http://127.0.0.1:3000/path", "not a url"]) {
      expect(originAllowed(origin, hosts)).toBe(false);
    }
    expect(originAllowed(undefined, hosts)).toBe(false);
  });
});

describe("the console's Origin check behind a public URL", () => {
  const origins = allowedOrigins(3000, "https://relay.example.com");

  it("takes the public URL's origin with its scheme, and the loopback ones over http", () => {
    for (const origin of ["https://relay.example.com", "HTTPS://RELAY.EXAMPLE.COM", "http://127.0.0.1:3000"]) expect(originAllowed(origin, origins)).toBe(true);
  });

  it("refuses the public name over plain http or on another port, and the loopback names over https", () => {
    for (const origin of ["http://relay.example.com", "https://relay.example.com:8443", "https://127.0.0.1:3000", "https://localhost:3000"]) {
      expect(originAllowed(origin, origins)).toBe(false);
    }
  });
});
