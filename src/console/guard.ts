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
  const hosts = new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`]);
  if (publicUrl) {
    const url = new URL(publicUrl);
    hosts.add(url.host.toLowerCase());
  }
  return hosts;
}

export function hostAllowed(host: string | undefined, allowed: ReadonlySet<string>): boolean {
  return host !== undefined && allowed.has(host.toLowerCase());
}

/** Whether `origin` (the Origin header) is one of the allowed hosts' (http, or https for a public URL). */
export function originAllowed(origin: string | undefined, allowed: ReadonlySet<string>): boolean {
  if (origin === undefined || origin === "null") return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  return (url.protocol === "http:" || url.protocol === "https:") && url.origin === origin.toLowerCase() && allowed.has(url.host);
}
