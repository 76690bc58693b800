// A TCP proxy in front of PostgreSQL or Redis that a test can cut, restore or stall, to see the service lose a
// dependency (or have it stop answering) and recover without a restart.
import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Refuses new connections and drops open ones. */
  cut(): Promise<void>;
  restore(): Promise<void>;
  /**
   * Open connections stop carrying bytes either way but stay open, as behind a proxy or NAT that silently lost the
   * flow; new connections work. Nothing is closed, so only timeouts on the service's side can notice.
   */
  stall(): void;
  /**
   * As stall, and new connections too are accepted but carry nothing, as a database host that froze: a connection
   * the service opens meanwhile never gets its server's greeting, so only its connect timeout can notice.
   */
  freeze(): void;
  /** Stalled (and frozen) connections carry bytes again, and new ones work. */
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  const stalled = new Set<[Socket, Socket]>();
  let server: Server | undefined;
  let port = 0;
  let frozen = false;

  async function listen(): Promise<void> {
    server = createServer((client) => {
      const upstream = connect(targetPort, targetHost);
      const pair: [Socket, Socket] = [client, upstream];
      pairs.add(pair);
      for (const socket of pair) {
        sockets.add(socket);
        socket.on('close', () => {
          sockets.delete(socket);
          pairs.delete(pair);
          stalled.delete(pair);
        });
        socket.on('error', () => socket.destroy());
      }
      if (!frozen) return void client.pipe(upstream).pipe(client);
      client.pause();
      upstream.pause();
      stalled.add(pair);
    });
    await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    port = (server!.address() as AddressInfo).port;
  }

  async function cut(): Promise<void> {
    const closing = new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    for (const socket of sockets) socket.destroy();
    await closing;
    server = undefined;
  }

  function stall(): void {
    for (const pair of pairs) {
      const [client, upstream] = pair;
      client.unpipe(upstream);
      upstream.unpipe(client);
      client.pause();
      upstream.pause();
      stalled.add(pair);
    }
  }

  function freeze(): void {
    frozen = true;
    stall();
  }

  function resume(): void {
    frozen = false;
    for (const [client, upstream] of stalled) client.pipe(upstream).pipe(client);
    stalled.clear();
  }

  await listen();
  return { port, cut, restore: listen, stall, freeze, resume, close: cut };
}
