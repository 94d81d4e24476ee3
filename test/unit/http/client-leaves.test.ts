/**
 * clientLeaves: a long-poll's watch on its response. It tells its
 * listeners once when the client goes before the response is finished
 * (one listener kept as it is, more in an array), and never after the
 * response was sent.
 */
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { clientLeaves } from "../../../src/http/transport.js";
import { until } from "../../helpers/until.js";

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server whose one request's response is handed to the test, and a client request to it. */
async function held(): Promise<{ res: ServerResponse; client: ReturnType<typeof request> }> {
  let got: ((res: ServerResponse) => void) | undefined;
  const response = new Promise<ServerResponse>((resolve) => (got = resolve));
  server = createServer((_req: IncomingMessage, res) => got!(res));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const client = request({ port: (server.address() as AddressInfo).port, host: "127.0.0.1", path: "/" });
  client.on("error", () => {});
  client.end();
  return { res: await response, client };
}

const listener = () => {
  const calls = { count: 0 };
  return { calls, handleEvent: () => (calls.count += 1) };
};

describe("clientLeaves", () => {
  it("tells each listener still added once when the client goes, the one removed not at all", async () => {
    const { res, client } = await held();
    const watch = clientLeaves(res);
    const [a, b, c] = [listener(), listener(), listener()];
    watch.addEventListener("abort", a);
    watch.addEventListener("abort", b);
    watch.addEventListener("abort", c);
    watch.removeEventListener("abort", b);
    expect(watch.aborted).toBe(false);
    client.destroy();
    await until(() => watch.aborted, 2000, "the watch to see the client go");
    expect([a.calls.count, b.calls.count, c.calls.count]).toEqual([1, 0, 1]);
  });

  it("tells a single listener once, and not one removed and added again twice", async () => {
    const { res, client } = await held();
    const watch = clientLeaves(res);
    const a = listener();
    watch.addEventListener("abort", a);
    watch.removeEventListener("abort", a);
    watch.addEventListener("abort", a);
    client.destroy();
    await until(() => watch.aborted, 2000, "the watch to see the client go");
    expect(a.calls.count).toBe(1);
  });

  it("does not abort once the response was sent", async () => {
    const { res, client } = await held();
    const watch = clientLeaves(res);
    const a = listener();
    watch.addEventListener("abort", a);
    const closed = new Promise((resolve) => res.on("close", resolve));
    res.end("{}");
    client.on("response", (answer) => answer.resume());
    await closed;
    expect(watch.aborted).toBe(false);
    expect(a.calls.count).toBe(0);
  });
});
