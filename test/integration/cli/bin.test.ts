/**
 * The `approval-relay` executable (bin/approval-relay.mjs) as a person runs
 * it from a clone (`npm link`, or the path): with dist/ current it starts at
 * once and builds nothing; with dist/ missing or older than src/ it builds
 * once, saying so in one line on stderr, then runs; an installed package
 * (no scripts/, no src/) runs dist/ without a check. The build itself is a
 * recording stand-in in a throwaway project (helpers/build-project.ts).
 */
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BuildProject, recordingBuild } from "../../helpers/build-project.js";
import { freePort } from "../../helpers/ports.js";
import { until } from "../../helpers/until.js";

const root = fileURLToPath(new URL("../../..", import.meta.url));

describe("the approval-relay executable in this clone", () => {
  beforeAll(() => {
    // What the first run in a clone does when src/ changed since the last build: build, so the test measures a current build.
    const built = spawnSync(process.execPath, ["--import", "./scripts/ensure-build.mjs", "-e", ""], { cwd: root, encoding: "utf8" });
    if (built.status !== 0) throw new Error(`npm run build failed:\n${built.stderr}`);
  }, 300_000);

  it("with dist/ current, answers --help at once from any directory and builds nothing", () => {
    const started = Date.now();
    const result = spawnSync(join(root, "bin", "approval-relay.mjs"), ["--help"], { cwd: tmpdir(), encoding: "utf8", env: { PATH: process.env.PATH ?? "" } });
    const elapsed = Date.now() - started;
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^Usage: approval-relay/);
    expect(result.stderr).toBe("");
    // A build takes 20–30 s; a start from a current build well under a second on an idle machine.
    expect(elapsed, `--help took ${elapsed} ms`).toBeLessThan(10_000);
  });

  it("serves from the built dist/ (as `npm link` runs it): a relay in local mode answers /healthz and serves the console page and its script", async () => {
    const stateHome = mkdtempSync(join(tmpdir(), "relay-bin-state-"));
    const port = await freePort();
    const child = spawn(join(root, "bin", "approval-relay.mjs"), ["serve"], {
      cwd: tmpdir(),
      env: { PATH: process.env.PATH ?? "", HOME: stateHome, XDG_STATE_HOME: stateHome, PORT: String(port), RELAY_SHUTDOWN_GRACE: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    const url = `http://127.0.0.1:${port}`;
    try {
      await until(
        () =>
          child.exitCode !== null ||
          fetch(`${url}/healthz`).then(
            (r) => r.ok,
            () => false,
          ),
        20_000,
        "/healthz",
      );
      expect(child.exitCode, output).toBeNull();
      const page = await fetch(`${url}/console`);
      expect(page.status).toBe(200);
      const html = await page.text();
      const script = /src="(\/console\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      expect(script, html).toBeDefined();
      expect((await fetch(`${url}${script!}`)).status).toBe(200);
    } finally {
      child.kill("SIGTERM");
      expect(await exited, output).toBe(0);
      rmSync(stateHome, { recursive: true, force: true });
    }
  });
});

describe("the approval-relay executable's build check", () => {
  let project: BuildProject;
  const cli = `process.stdout.write("cli ran " + process.argv.slice(2).join(" "));\n`;

  beforeAll(() => {
    project = new BuildProject(["bin/approval-relay.mjs", "scripts/build-stamp.mjs"]);
    mkdirSync(join(project.dir, "dist", "cli"), { recursive: true });
    writeFileSync(join(project.dir, "package.json"), '{ "type": "module" }\n');
    writeFileSync(join(project.dir, "dist", "cli", "main.js"), cli);
  });
  afterAll(() => project.remove());

  const run = () => spawnSync(process.execPath, [join(project.dir, "bin", "approval-relay.mjs"), "ask", "Deploy?"], { cwd: project.dir, encoding: "utf8" });

  it("when nothing changed since the build, it runs the CLI without building and writes nothing to stderr", () => {
    project.builtAt(recordingBuild);
    const result = run();
    expect(result).toMatchObject({ status: 0, stdout: "cli ran ask Deploy?", stderr: "" });
    expect(project.built).toBe(false);
  });

  it("when there is no complete build, it builds once, says so in one line first, then runs the CLI", () => {
    project.builtAt(recordingBuild);
    project.removeStamp();
    const result = run();
    expect(result.stderr.split("\n")[0]).toBe("approval-relay: building approval-relay once (no complete build in dist/; npm run build, about half a minute)…");
    expect(result.stderr).toMatch(/\napproval-relay: built in \d+ s; later runs start at once\.\n$/);
    expect(project.built).toBe(true);
    expect(result.stdout).toBe("cli ran ask Deploy?");
  });

  it("when src/ changed since the build, it builds first and says why", () => {
    project.builtAt(recordingBuild);
    project.touchSource();
    const result = run();
    expect(result.stderr.split("\n")[0]).toBe(
      "approval-relay: building approval-relay once (src/ changed since the last build; npm run build, about half a minute)…",
    );
    expect(project.built).toBe(true);
    expect(result.stdout).toBe("cli ran ask Deploy?");
  });

  it("when the build fails, it exits 3 without running the CLI and says how to run what is built", () => {
    project.builtAt("process.exit(2);\n");
    project.removeStamp();
    const result = run();
    expect(result.status).toBe(3);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(
      "approval-relay: the build failed (see above); fix the errors, or run what is in dist/ anyway with `node dist/cli/main.js`.",
    );
  });

  it("as an installed package (no scripts/ or src/), it runs dist/ without any check", () => {
    const installed = mkdtempSync(join(tmpdir(), "relay-bin-installed-"));
    try {
      for (const dir of ["bin", "dist/cli"]) mkdirSync(join(installed, dir), { recursive: true });
      copyFileSync(join(root, "bin", "approval-relay.mjs"), join(installed, "bin", "approval-relay.mjs"));
      writeFileSync(join(installed, "package.json"), '{ "type": "module" }\n');
      writeFileSync(join(installed, "dist", "cli", "main.js"), cli);
      const result = spawnSync(process.execPath, [join(installed, "bin", "approval-relay.mjs"), "--help"], { cwd: installed, encoding: "utf8" });
      expect(result).toMatchObject({ status: 0, stdout: "cli ran --help", stderr: "" });
    } finally {
      rmSync(installed, { recursive: true, force: true });
    }
  });
});
