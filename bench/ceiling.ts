// The ceiling of this stack on this machine: bare Koa answering the service's own response bytes, with no database,
// no validation and no middleware. run.ts forks this file, sends the routes over IPC and receives the port. Started
// `withHeaders`, it also sets every header the service's response carries (set as a Koa application sets them, one
// `ctx.set` each, with the values the service sent once): what the same response, headers and all, costs this stack.
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';

export interface CeilingRoute {
  method: string;
  /** Path and query, matched exactly. */
  url: string;
  status: number;
  contentType: string;
  /** The response bytes, base64 (IPC carries JSON). */
  body: string;
  /** The service's response headers but Node's own (see Fixture in rows.ts), Content-Type among them. */
  headers: Array<[string, string]>;
}

export interface CeilingSetup {
  routes: CeilingRoute[];
  withHeaders: boolean;
}

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
  headers: Array<[string, string]>;
}

async function parseJson(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

function ceilingApp({ routes, withHeaders }: CeilingSetup): Koa {
  const answers = new Map<string, Answer>(
    routes.map((route) => [
      `${route.method} ${route.url}`,
      {
        status: route.status,
        contentType: route.contentType,
        body: Buffer.from(route.body, 'base64'),
        headers: route.headers,
      },
    ]),
  );
  const app = new Koa();
  app.use(async (ctx) => {
    const answer = answers.get(`${ctx.method} ${ctx.url}`);
    if (!answer) {
      ctx.status = 404;
      return;
    }
    // A POST still pays for reading and parsing its JSON body, as the service must.
    if (ctx.method === 'POST') await parseJson(ctx.req);
    ctx.status = answer.status;
    if (withHeaders) for (const [name, value] of answer.headers) ctx.set(name, value);
    else ctx.set('Content-Type', answer.contentType);
    ctx.body = answer.body;
  });
  return app;
}

// Never outlive the benchmark, even when it is killed before it can stop this process.
process.on('disconnect', () => process.exit(0));

const [setup] = (await once(process, 'message')) as [CeilingSetup];
const server = createServer(ceilingApp(setup).callback()).listen(0, '127.0.0.1');
await once(server, 'listening');
process.send!({ port: (server.address() as AddressInfo).port });
