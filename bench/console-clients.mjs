// The consoles scenario's open consoles (./consoles.ts), in a process of their own so that reading their
// streams does not slow the bench's agent: opens one GET /console/api/events per cookie (CONSOLE_BASE,
// CONSOLE_COOKIES as JSON), prints "open" once every stream has its headers, counts the events (a write
// of the relay's may hold several, and an event may span chunks), and prints the count and exits on "stop"
// from stdin.
import { request } from "node:http";

const base = new URL(process.env.CONSOLE_BASE);
const cookies = JSON.parse(process.env.CONSOLE_COOKIES);
let events = 0;
const streams = await Promise.all(
  cookies.map(
    (cookie) =>
      new Promise((resolve, reject) => {
        const req = request(new URL("/console/api/events", base), { headers: { cookie } }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`console stream answered ${res.statusCode}`));
          res.setEncoding("utf8");
          let partial = "";
          res.on("data", (chunk) => {
            const frames = (partial + chunk).split("\n\n");
            partial = frames.pop();
            for (const frame of frames) if (frame.startsWith("event: request\n")) events += 1;
          });
          resolve(req);
        });
        req.on("error", (error) => (req.destroyed ? undefined : reject(error)));
        req.end();
      }),
  ),
);
process.stdout.write("open\n");
process.stdin.once("data", () => {
  for (const stream of streams) stream.destroy();
  process.stdout.write(`${events}\n`);
  process.exit(0);
});
