/**
 * A throwaway project for the build check that `npm start` and the
 * `approval-relay` executable run (scripts/build-stamp.mjs): the real check
 * copied in, a stand-in build script (`recordingBuild` leaves a `built` file
 * when it ran), sources and a stamp from a build at a fixed time, which a
 * test then moves past or removes.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** A build script that records that it ran. */
export const recordingBuild = `import { writeFileSync } from "node:fs";\nwriteFileSync(new URL("../built", import.meta.url), "yes");\n`;

export class BuildProject {
  /** When the sources last changed and the last build started. */
  static readonly T = new Date("2026-01-01T00:00:00Z");
  readonly dir: string;

  /** `files`: paths under the repository (e.g. "scripts/build-stamp.mjs") copied in as they are. */
  constructor(private readonly files: string[]) {
    this.dir = mkdtempSync(join(tmpdir(), "relay-build-check-"));
    for (const dir of ["scripts", "src/store", "dist"]) mkdirSync(join(this.dir, dir), { recursive: true });
    for (const file of files) {
      mkdirSync(join(this.dir, file, ".."), { recursive: true });
      copyFileSync(join(root, file), join(this.dir, file));
    }
  }

  /** Resets the project: sources and build script last changed at T, stamped by a build at T. */
  builtAt(buildScript: string): void {
    writeFileSync(join(this.dir, "scripts", "build.mjs"), buildScript);
    writeFileSync(join(this.dir, "src", "store", "store.ts"), "export {};\n");
    writeFileSync(join(this.dir, "dist", ".build-stamp.json"), JSON.stringify({ inputsMtimeMs: BuildProject.T.getTime() }));
    rmSync(join(this.dir, "built"), { force: true });
    const T = BuildProject.T;
    for (const path of ["scripts/build.mjs", ...this.files, "src/store/store.ts", "src/store", "src"]) utimesSync(join(this.dir, path), T, T);
  }

  /** Marks a source file changed a second after the build. */
  touchSource(): void {
    const later = new Date(BuildProject.T.getTime() + 1000);
    utimesSync(join(this.dir, "src", "store", "store.ts"), later, later);
  }

  removeStamp(): void {
    rmSync(join(this.dir, "dist", ".build-stamp.json"));
  }

  /** Whether the stand-in build ran since the last builtAt. */
  get built(): boolean {
    return existsSync(join(this.dir, "built"));
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}
