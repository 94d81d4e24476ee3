/**
 * Config files (RELAY_CONFIG_FILE) for loadConfig tests: each written to a
 * throwaway directory that is removed after the test file's tests.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";

/** Returns a writer: `write(content, extension)` puts `content` in a new file and returns its path. */
export function configFiles(defaultExtension: "json" | "yaml"): (content: string, extension?: string) => string {
  const dir = mkdtempSync(join(tmpdir(), "relay-config-test-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  let files = 0;
  return (content, extension = defaultExtension) => {
    const path = join(dir, `config-${(files += 1)}.${extension}`);
    writeFileSync(path, content);
    return path;
  };
}
