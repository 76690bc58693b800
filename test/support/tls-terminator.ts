// A loopback TLS terminator for tests whose client insists on https (as @shopify/ucp-cli does for a business and a
// profile URL): a self-signed certificate for 127.0.0.1 and localhost made at test time with the openssl command line
// (no key or certificate is kept in the repository), and a TLS server that hands each decrypted connection to a plain
// TCP target, byte for byte, so the service behind it sees an ordinary HTTP/1.1 connection. A client trusts the
// certificate through NODE_EXTRA_CA_CERTS (a child process) or tls.setDefaultCACertificates (this process).
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer, type Server } from 'node:tls';
import { promisify } from 'node:util';

export interface SelfSignedCertificate {
  /** The PEM file of the certificate, for NODE_EXTRA_CA_CERTS. */
  certPath: string;
  cert: string;
  key: string;
  /** Removes the directory holding the files. */
  remove(): Promise<void>;
}

/** A one-day self-signed P-256 certificate naming 127.0.0.1 and localhost, made by openssl in a fresh directory. */
export async function selfSignedCertificate(): Promise<SelfSignedCertificate> {
  const dir = await mkdtemp(join(tmpdir(), 'tls-terminator-'));
  const certPath = join(dir, 'cert.pem');
  const keyPath = join(dir, 'key.pem');
  // openssl req -x509 marks the certificate as its own CA (basicConstraints CA:TRUE), so it can be a trust anchor.
  await promisify(execFile)('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-days',
    '1',
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    '-keyout',
    keyPath,
    '-out',
    certPath,
  ]);
  return {
    certPath,
    cert: await readFile(certPath, 'utf8'),
    key: await readFile(keyPath, 'utf8'),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

export interface TlsTerminator {
  /** https://127.0.0.1:<port> */
  url: string;
  port: number;
  /** Points new connections at a plain TCP target (the terminator may listen before its target exists). */
  target(url: string): void;
  close(): Promise<void>;
}

/** Listens on 127.0.0.1 with `certificate`, each connection piped to the target's host and port once decrypted. */
export async function startTlsTerminator(certificate: SelfSignedCertificate, target?: string): Promise<TlsTerminator> {
  let upstream = target ? new URL(target) : undefined;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const server: Server = createServer({ key: certificate.key, cert: certificate.cert }, (client) => {
    track(client);
    if (!upstream) return client.destroy();
    const plain = connect(Number(upstream.port), upstream.hostname);
    track(plain);
    client.on('error', () => plain.destroy());
    plain.on('error', () => client.destroy());
    client.pipe(plain).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    target(url: string) {
      upstream = new URL(url);
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
