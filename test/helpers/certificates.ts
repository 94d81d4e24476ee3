/**
 * A certificate authority of a test's own and a server certificate it signed
 * (openssl, P-256 keys, valid for a day), for TLS servers the tests start
 * (redis-server --tls-port): in a temp dir that remove() deletes.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Certificates {
  /** The CA's certificate (PEM), what a client is told to trust. */
  caFile: string;
  /** The server's certificate (PEM), for `names` only. */
  certFile: string;
  keyFile: string;
  remove(): void;
}

/** A CA and a server certificate for `names` (DNS names; IP addresses as `IP:127.0.0.1`). */
export function makeCertificates(names: string[]): Certificates {
  const dir = mkdtempSync(join(tmpdir(), "relay-tls-"));
  const at = (file: string) => join(dir, file);
  const openssl = (...args: string[]) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
  const key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  try {
    openssl("req", "-x509", ...key, "-keyout", "ca.key", "-out", "ca.pem", "-days", "1", "-subj", "/CN=relay-test-ca");
    openssl("req", ...key, "-keyout", "server.key", "-out", "server.csr", "-subj", `/CN=${names[0]}`);
    const alt = names.map((name) => (name.startsWith("IP:") ? name : `DNS:${name}`)).join(",");
    writeFileSync(at("server.ext"), `subjectAltName=${alt}\n`);
    openssl(
      "x509",
      "-req",
      "-in",
      "server.csr",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "server.pem",
      "-days",
      "1",
      "-extfile",
      "server.ext",
    );
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return { caFile: at("ca.pem"), certFile: at("server.pem"), keyFile: at("server.key"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
