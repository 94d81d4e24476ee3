/**
 * The throwaway redis-server the test run and the bench start
 * (test/helpers/redis-server.ts): it answers, keeps nothing on disk, and
 * leaves no process or temp dir behind — after stop(), and when the process
 * that started it is killed outright.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { startRedisServer } from "../../helpers/redis-server.js";
import { until } from "../../helpers/until.js";

async function answers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on("error", () => undefined);
  try {
    await redis.connect();
    return (await redis.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

describe("a throwaway redis-server", () => {
  it("answers on its own port with persistence off, and stop() ends it and removes its dir", async () => {
    const server = await startRedisServer();
    const redis = new Redis(server.url);
    const [, dir] = (await redis.config("GET", "dir")) as [string, string];
    expect(await redis.config("GET", "save")).toStrictEqual(["save", ""]);
    expect(await redis.config("GET", "appendonly")).toStrictEqual(["appendonly", "no"]);
    redis.disconnect();
    expect(existsSync(dir)).toBe(true);

    await server.stop();
    expect(await answers(server.url)).toBe(false);
    expect(existsSync(dir)).toBe(false);
  });

  it("when the process that started it is killed with SIGKILL, the server stops and its dir is removed", async () => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "--input-type=module",
        "-e",
        `
        const { startRedisServer } = await import("./test/helpers/redis-server.ts");
        const server = await startRedisServer();
        process.stdout.write(server.url + "\\n");
        setInterval(() => {}, 1000);
      `,
      ],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    const exited = new Promise((resolve) => child.once("exit", resolve));
    try {
      const url = await new Promise<string>((resolve) => {
        let out = "";
        child.stdout!.on("data", (chunk: Buffer) => {
          out += chunk.toString("utf8");
          if (out.includes("\n")) resolve(out.trim());
        });
      });
      const redis = new Redis(url);
      const [, dir] = (await redis.config("GET", "dir")) as [string, string];
      redis.disconnect();

      child.kill("SIGKILL");
      await exited;
      await until(async () => !(await answers(url)) && !existsSync(dir), 5000, "the orphaned server to stop");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
