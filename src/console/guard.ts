/**
 * The web console's checks on where a call comes from (docs/console.md,
 * security model): a Host allowlist against DNS rebinding (a page on
 * another name that resolves to 127.0.0.1 sends its own Host), and, on
 * every state-changing call, an Origin among the same hosts (a cross-site
 * form or fetch carries its own origin, or none, and is refused). Both
 * fail closed: a call without the header is refused.
 */

/** The hosts (`name:port`) the console answers to: the loopback names on `port`, and RELAY_PUBLIC_URL's host when set. */
export function allowedHosts(port: number, publicUrl?: string): Set<string> {
  const hosts = new Set(loopbackHosts(port));
  if (publicUrl) {
    const url = new URL(publicUrl);
    hosts.add(url.host.toLowerCase());
  }
  return hosts;
}

export function hostAllowed(host: string | undefined, allowed: ReadonlySet<string>): boolean {
  return host !== undefined && allowed.has(host.toLowerCase());
}

/**
 * The origins (`scheme://name:port`) a state-changing call may come from: the
 * loopback names on `port` over http, and RELAY_PUBLIC_URL's origin, its scheme
 * included (behind TLS, a page served over plain http on the public name is
 * not the console's).
 */
export function allowedOrigins(port: number, publicUrl?: string): Set<string> {
  const origins = new Set(loopbackHosts(port).map((host) => `http://${host}`));
  if (publicUrl) origins.add(new URL(publicUrl).origin.toLowerCase());
  return origins;
}

/** Whether `origin` (the Origin header) is exactly one of `allowed` (allowedOrigins). */
export function originAllowed(origin: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (origin === undefined || origin === "null") return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") && url.origin === origin.toLowerCase() && allowed.has(url.origin);
}

/** The loopback names on `port`, as a Host header gives them. */
function loopbackHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}
