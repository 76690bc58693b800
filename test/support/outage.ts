// A service whose PostgreSQL connection runs through a TCP proxy the test can cut and restore, to see it lose its
// database and recover without a restart. PostgreSQL only: an embedded PGlite cannot become unreachable.
import { createTestDatabase } from './database.js';
import { startTestService, type TestService } from './service.js';
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface ServiceBehindProxy {
  api: TestService;
  proxy: TcpProxy;
  close(): Promise<void>;
}

export async function startServiceBehindProxy(): Promise<ServiceBehindProxy> {
  const database = await createTestDatabase();
  const target = new URL(database.env.DATABASE_URL!);
  const proxy = await startTcpProxy(target.hostname, Number(target.port || 5432));
  target.hostname = '127.0.0.1';
  target.port = String(proxy.port);
  const api = await startTestService({ database: { ...database, env: { DATABASE_URL: target.toString() } } });
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
