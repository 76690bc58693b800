// An HTTP proxy in front of the service for clients that run as child processes (a published CLI): every response is
// validated against the OpenAPI document (validateResponse, as contractFetch does) before it is relayed, and every
// exchange is recorded, so a test sees what the client sent (its protocol version, its headers) and what it was
// answered. A response that breaks the contract is still relayed, and its violation kept for the test to assert.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateResponse } from './contract.js';

export interface ProxiedExchange {
  method: string;
  path: string;
  requestHeaders: IncomingHttpHeaders;
  /** The request body, parsed when it is JSON. */
  request: any;
  status: number;
  responseHeaders: Headers;
  /** The response body as text (an event stream as its events). */
  response: string;
}

export interface ContractProxy {
  url: string;
  exchanges: ProxiedExchange[];
  /** Each response that broke the contract: what validateResponse said. */
  violations: string[];
  close(): Promise<void>;
}

// Headers of one hop, or that fetch has already acted on (it decodes the body and frames it anew).
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'content-encoding',
  'host',
  'upgrade',
]);

export async function startContractProxy(target: string): Promise<ContractProxy> {
  const exchanges: ProxiedExchange[] = [];
  const violations: string[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const headers = new Headers();
        for (const [name, value] of Object.entries(request.headers))
          if (value !== undefined && !HOP_BY_HOP.has(name))
            headers.set(name, Array.isArray(value) ? value.join(', ') : value);
        const url = new URL(request.url ?? '/', target);
        const method = request.method ?? 'GET';
        const answer = await fetch(url, {
          method,
          headers,
          body: ['GET', 'HEAD'].includes(method) ? undefined : body,
        });
        const text = await answer.text();
        try {
          validateResponse(method, url, answer, text);
        } catch (error) {
          violations.push((error as Error).message);
        }
        const raw = body.toString('utf8');
        let parsed: unknown = raw;
        try {
          parsed = raw ? JSON.parse(raw) : undefined;
        } catch {
          // Not JSON: kept as text.
        }
        exchanges.push({
          method,
          path: url.pathname,
          requestHeaders: request.headers,
          request: parsed,
          status: answer.status,
          responseHeaders: answer.headers,
          response: text,
        });
        const relayed: Record<string, string> = {};
        answer.headers.forEach((value, name) => {
          if (!HOP_BY_HOP.has(name)) relayed[name] = value;
        });
        response.writeHead(answer.status, relayed);
        response.end(text);
      })().catch((error: Error) => {
        violations.push(`proxy: ${request.method} ${request.url}: ${error.message}`);
        response.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    exchanges,
    violations,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
