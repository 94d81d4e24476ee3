/**
 * RELAY_CALLBACK_HOSTS: when set, the only hosts callbacks may go to. The
 * domain checks a request's callbackUrl when it is created, and the callback
 * worker checks again before each delivery (the list may have changed). A URL
 * is allowed when its host name equals one of the listed names, ignoring case
 * and a trailing dot. There is no suffix or wildcard matching: list every
 * host. An empty list allows none; no list at all allows every host.
 */

/** true when `url` may receive callbacks under `hosts` (undefined: any host). */
export function callbackHostAllowed(url: string, hosts: readonly string[] | undefined): boolean {
  if (hosts === undefined) return true;
  const host = hostOf(url);
  return host !== undefined && hosts.some((allowed) => canonicalHost(allowed) === host);
}

/** The URL's host name as compared against the list, or undefined for a bad URL. */
export function hostOf(url: string): string | undefined {
  try {
    return trim(new URL(url).hostname);
  } catch {
    return undefined;
  }
}

/** A listed name the way URL parsing writes a host (lower case, IDN in punycode, IPv6 in brackets). */
function canonicalHost(name: string): string {
  const bare = name.trim();
  const ipv6 = bare.split(":").length > 2 && !bare.startsWith("[");
  try {
    return trim(new URL(`http://${ipv6 ? `[${bare}]` : bare}`).hostname);
  } catch {
    return trim(bare.toLowerCase());
  }
}

function trim(host: string): string {
  return host.endsWith(".") ? host.slice(0, -1) : host;
}
