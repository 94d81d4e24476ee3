// The floor's server (bench/floor.ts): the least a relay could do on the
// click → agent path, in a process of its own on the same node binary. A GET
// /wait/:id is held until a POST /release/:id arrives; the POST's body is read
// whole (a Slack click is a few kilobytes), answered 200 at once, and the held
// GET then gets a small JSON body. Plain JavaScript, no framework: nothing of
// the relay's, so the difference between the two is the relay's own cost.
import { Buffer } from "node:buffer";
import { createServer } from "node:http";

const held = new Map();

const server = createServer((req, res) => {
  const [, verb, id] = req.url.split("/");
  if (req.method === "GET" && verb === "wait") {
    held.set(id, res);
    req.on("close", () => held.delete(id));
    return;
  }
  if (req.method === "GET" && verb === "held") {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ held: held.has(id) }));
    return;
  }
  if (req.method === "POST" && verb === "release") {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const waiting = held.get(id);
      res.writeHead(waiting ? 200 : 404).end();
      if (!waiting) return;
      held.delete(id);
      const body = JSON.stringify({ id, status: "answered", decision: { reply: "y" }, bytes: Buffer.concat(chunks).length });
      waiting.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
      waiting.end(body);
    });
    return;
  }
  res.writeHead(404).end();
});

server.keepAliveTimeout = 72_000;
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`));
process.on("SIGTERM", () => process.exit(0));
