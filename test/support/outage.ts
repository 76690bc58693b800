// A service whose PostgreSQL (or Redis) connection runs through a TCP proxy the test can cut, restore or stall, to see
// it lose a dependency and recover without a restart. PostgreSQL only: an embedded PGlite cannot become unreachable.
import { createTestDatabase } from './database.js';
import { startTestService, type TestService, type TestServiceOptions } from './service.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface ServiceBehindProxy {
  api: TestService;
  proxy: TcpProxy;
  close(): Promise<void>;
}

/** The proxy in front of the service at `url` (postgres:// or redis://) and the URL that goes through it. */
export async function proxied(url: string): Promise<{ proxy: TcpProxy; url: string }> {
  const target = new URL(url);
  const proxy = await startTcpProxy(
    target.hostname,
    Number(target.port || (target.protocol === 'redis:' ? 6379 : 5432)),
  );
  target.hostname = '127.0.0.1';
  target.port = String(proxy.port);
  return { proxy, url: target.toString() };
}

export async function startServiceBehindProxy(
  env: Record<string, string> = {},
  options: Pick<TestServiceOptions, 'log'> = {},
): Promise<ServiceBehindProxy> {
  const database = await createTestDatabase();
  const { proxy, url } = await proxied(database.env.DATABASE_URL!);
  const api = await startTestService({ ...options, database: { ...database, env: { DATABASE_URL: url } }, env });
  return {
    api,
    proxy,
    async close() {
      await api.close();
      await proxy.close();
      await database.drop();
    },
  };
}
