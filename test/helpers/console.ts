/**
 * What the web console's tests do as a browser would, where fetch cannot:
 * a call with a Host of the test's choosing (DNS rebinding), and the value
 * of one cookie a reply sets.
 */
import { request as httpRequest } from "node:http";

/** GET with a Host of our choosing (fetch does not let a caller set it); resolves with the status. */
export function getWithHost(url: string, path: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { headers: { host } }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    });
    req.on("error", reject);
    req.end();
  });
}

/** `name=value` of the cookie `name` that `reply` sets, as a browser would send it back; undefined when it sets none. */
export function cookieOf(reply: Response, name: string): string | undefined {
  return reply.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith(`${name}=`));
}
