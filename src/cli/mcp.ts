/**
 * `approval-relay mcp`: the relay's MCP tools (src/mcp/tools.ts) over stdio,
 * for MCP clients configured by command (Claude Desktop, Cursor, Codex, or
 * Claude Code without a URL). A local process that forwards to the relay
 * with RELAY_URL / RELAY_TOKEN through the client library, so it outlives
 * the relay's restarts as every agent of the library does. When the client
 * goes (stdin closes) or the process is stopped, every call still waiting
 * has its request cancelled before the process exits. Its stdout carries
 * only MCP messages; what it has to say goes to stderr.
 */
import { hostname } from "node:os";
import { Readable, Writable } from "node:stream";
import { parseArgs } from "node:util";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { failureReason, isAbortError } from "../client/errors.js";
import type { RelayClient } from "../client/relay-client.js";
import type { McpRelay } from "../mcp/relay.js";
import { CONNECTION_CLOSED, createMcpServer } from "../mcp/tools.js";
import { DEFAULT_MCP_PROGRESS_SECONDS, Holders } from "../mcp/waiting.js";
import { clientFor, CONNECTION_OPTIONS, connection, parseSeconds } from "./connection.js";
import type { CliIo } from "./io.js";
import { EXIT, USAGE } from "./usage.js";

/** As RELAY_MCP_PROGRESS in the relay's configuration. */
const MAX_PROGRESS_SECONDS = 55;
/** Longest wait for the cancels of the calls still waiting when the client goes. */
const CLOSE_GRACE_MS = 5000;

const OPTIONS = { ...CONNECTION_OPTIONS, help: { type: "boolean", short: "h" } } as const;

export async function mcp(args: string[], io: CliIo): Promise<number> {
  let values;
  try {
    values = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    io.stderr.write(`approval-relay mcp: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`);
    return EXIT.error;
  }
  if (values.help) {
    io.stdout.write(USAGE);
    return 0;
  }
  const conn = connection(values, io.env);
  const progress = io.env.RELAY_MCP_PROGRESS ? parseSeconds(io.env.RELAY_MCP_PROGRESS, MAX_PROGRESS_SECONDS) : DEFAULT_MCP_PROGRESS_SECONDS;
  const problem =
    typeof conn === "string"
      ? conn
      : progress === undefined
        ? `RELAY_MCP_PROGRESS must be a whole number of seconds from 1 to ${MAX_PROGRESS_SECONDS}`
        : undefined;
  if (problem !== undefined || typeof conn === "string" || progress === undefined) {
    io.stderr.write(`approval-relay mcp: ${problem}\n`);
    return EXIT.error;
  }

  const closing = new AbortController();
  const holders = new Holders();
  const server = createMcpServer({
    relay: clientRelay(clientFor(conn, io)),
    holders,
    progressMs: progress * 1000,
    agent: { host: hostname(), cwd: io.cwd },
    callSignal: () => closing.signal,
  });
  const stdin = Readable.from(io.stdin);
  const stdout = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      io.stdout.write(chunk.toString());
      done();
    },
  });
  const ended = new Promise<void>((resolve) => {
    stdin.once("end", resolve);
    stdin.once("close", resolve);
    io.signal.addEventListener("abort", () => resolve(), { once: true });
  });
  await server.connect(new StdioServerTransport(stdin, stdout));
  await ended;
  closing.abort(CONNECTION_CLOSED);
  await Promise.race([holders.idle(), new Promise((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
  await server.close();
  // Lets go of the process's stdin, which would otherwise keep it running after a SIGTERM.
  stdin.destroy();
  return 0;
}

/** The tools' port over the client library: the relay's agent API, with its retries. */
function clientRelay(client: RelayClient): McpRelay {
  return {
    create: (body, idempotencyKey) => client.request(body, idempotencyKey === undefined ? {} : { idempotencyKey }),
    untilEnded: (id, signal) => client.wait(id, { signal }),
    async check(id, waitMs, signal) {
      const timeout = AbortSignal.timeout(waitMs);
      try {
        return await client.wait(id, { signal: AbortSignal.any([signal, timeout]) });
      } catch (error) {
        if (isAbortError(error) && timeout.aborted && !signal.aborted) return client.get(id, { signal });
        throw error;
      }
    },
    async cancel(id) {
      await client.cancel(id, { retries: 1, timeoutMs: 5000 });
    },
    failureReason,
  };
}
