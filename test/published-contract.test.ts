// The contract as consumers get it at /openapi.json and /docs: the configured addresses, one operation per capability,
// responses open for additive change, requests as strict as the service is. (Every response the tests receive is still
// validated against the strict bundled document: test/support/contract.ts.)
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectPath } from '../src/paths.js';
import { startTestService, type TestService } from './support/service.js';

const BASE_URL = 'https://shop.example.test';
const AGENT_BASE_URL = 'https://agents.example.test';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let api: TestService;
let published: any;
const bundled = JSON.parse(readFileSync(projectPath('codegen', 'openapi.json'), 'utf8'));

beforeAll(async () => {
  api = await startTestService({ env: { BASE_URL, AGENT_BASE_URL } });
  published = await (await api.http('/openapi.json')).json();
});
afterAll(async () => {
  await api?.close();
});

function operations(document: any): Array<{ path: string; method: string; operation: any }> {
  return Object.entries(document.paths).flatMap(([path, item]: [string, any]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, operation: item[method] })),
  );
}

/** Every node under `node`, with its JSON pointer. */
function* walk(node: unknown, pointer = ''): Generator<[any, string]> {
  if (!node || typeof node !== 'object') return;
  yield [node, pointer];
  for (const [key, value] of Object.entries(node)) yield* walk(value, `${pointer}/${key}`);
}

describe('/openapi.json', () => {
  it('advertises the configured BASE_URL and AGENT_BASE_URL, and the token URL on the agent origin', () => {
    expect(published.servers.map((server: any) => server.url)).toEqual([BASE_URL]);
    const agentServers = new Set(
      Object.values(published.paths).flatMap((item: any) => (item.servers ?? []).map((server: any) => server.url)),
    );
    expect([...agentServers]).toEqual([AGENT_BASE_URL]);
    expect(JSON.stringify(published)).not.toMatch(/"url":"\{/);
    expect(published.components.securitySchemes.agentToken.flows.clientCredentials.tokenUrl).toBe(
      `${AGENT_BASE_URL}/oauth/token`,
    );
  });

  it('gives generators one operation per capability: aliases are named in the operation they repeat', () => {
    const aliases = operations(bundled).filter(({ operation }) => operation['x-alias-of']);
    expect(aliases.length).toBeGreaterThan(0);
    const publishedIds = new Set(operations(published).map(({ operation }) => operation.operationId));
    for (const { path, method, operation } of aliases) {
      expect(publishedIds).not.toContain(operation.operationId);
      const canonical = operations(published).find((entry) => entry.operation.operationId === operation['x-alias-of']);
      expect(canonical?.operation.description).toContain(`\`${method.toUpperCase()} ${path}\``);
    }
    expect(publishedIds.size).toBe(operations(bundled).length - aliases.length);
  });

  it('opens every response schema for additive change and keeps request schemas strict', () => {
    const responseNodes = [...walk(published.components.schemas)].filter(([, pointer]) => {
      const name = pointer.split('/')[1];
      return (
        JSON.stringify(published.components.responses).includes(`"#/components/schemas/${name}"`) ||
        JSON.stringify(published.paths).includes(`"#/components/schemas/${name}"`)
      );
    });
    expect(responseNodes.length).toBeGreaterThan(0);
    const requestNames = new Set(
      operations(bundled)
        .map(({ operation }) => operation.requestBody?.content?.['application/json']?.schema?.$ref)
        .filter(Boolean)
        .map((ref: string) => ref.split('/').pop()),
    );
    for (const [node, pointer] of walk(published.components.responses)) {
      expect(node.additionalProperties, pointer).not.toBe(false);
      expect(node.oneOf, pointer).toBeUndefined();
    }
    for (const name of Object.keys(published.components.schemas)) {
      if (requestNames.has(name)) {
        expect(published.components.schemas[name], name).toEqual(bundled.components.schemas[name]);
        continue;
      }
      if (!JSON.stringify(published.components.responses).includes(`/${name}"`)) continue;
      for (const [node, pointer] of walk(published.components.schemas[name], name)) {
        expect(node.additionalProperties, pointer).not.toBe(false);
        if (Array.isArray(node.enum))
          expect(
            node.enum.every((value: unknown) => typeof value !== 'string'),
            pointer,
          ).toBe(true);
      }
    }
    expect(published.components.schemas.ReadError.properties.error.properties.code['x-extensible-enum']).toEqual(
      bundled.components.schemas.ReadError.properties.error.properties.code.enum,
    );
    expect(published.components.schemas.CheckoutSession.additionalProperties).toBeUndefined();
    expect(bundled.components.schemas.CheckoutSession.additionalProperties).toBe(false);
  });

  it('has no server variable descriptions (swagger-parser rejects them)', () => {
    const committed = JSON.parse(readFileSync(projectPath('codegen', 'openapi.published.json'), 'utf8'));
    for (const [node, pointer] of walk(committed))
      if (pointer.includes('/variables/') && pointer.split('/').length - pointer.split('/').indexOf('variables') === 2)
        expect(node.description, pointer).toBeUndefined();
  });
});

describe('/docs', () => {
  it('shows the configured addresses instead of the server variables', async () => {
    const html = await (await api.http('/docs')).text();
    expect(html).toContain(BASE_URL);
    expect(html).toContain(AGENT_BASE_URL);
    expect(html).not.toContain('{base_url}');
    expect(html).not.toContain('{agent_base_url}');
  });

  it('is self-contained: telemetry off, no logo from a CDN, and every link in the page is a fragment of /docs', async () => {
    const html = await (await api.http('/docs')).text();
    expect(html).toContain('"disableTelemetry":true');
    expect(html).not.toMatch(/cdn\.redoc\.ly/);
    const hrefs = [...html.matchAll(/href="([^"]*)"/g)].map(([, href]) => href!);
    expect(hrefs).toContain('#/section/money');
    expect(hrefs.filter((href) => href.startsWith('/'))).toEqual([]);
  });
});

describe('compression', () => {
  it.each(['/docs', '/openapi.json'])('sends %s as br or gzip, whichever the client accepts', async (path) => {
    for (const encoding of ['br', 'gzip']) {
      const response = await api.http(path, { headers: { 'Accept-Encoding': encoding } });
      expect(response.headers.get('content-encoding')).toBe(encoding);
      expect(response.headers.get('vary')).toContain('Accept-Encoding');
      expect((await response.text()).length).toBeGreaterThan(100_000);
    }
    const plain = await api.http(path, { headers: { 'Accept-Encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(plain.headers.get('vary')).toContain('Accept-Encoding');
  });

  it.each(['/docs', '/openapi.json'])('names Accept-Encoding in Vary on a 304 of %s as on its 200', async (path) => {
    const fresh = await api.http(path, { headers: { 'Accept-Encoding': 'gzip' } });
    const notModified = await api.http(path, {
      headers: { 'Accept-Encoding': 'gzip', 'If-None-Match': fresh.headers.get('etag')! },
    });
    expect(notModified.status).toBe(304);
    expect(notModified.headers.get('vary')).toContain('Accept-Encoding');
  });
});

describe('/favicon.ico', () => {
  it('is an icon, cacheable like every read', async () => {
    const response = await api.http('/favicon.ico');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('image/x-icon');
    expect(response.headers.get('cache-control')).toBe('public, max-age=60');
    const icon = Buffer.from(await response.arrayBuffer());
    expect([...icon.subarray(0, 4)]).toEqual([0, 0, 1, 0]); // ICONDIR: reserved 0, type 1 (icon)
    const again = await api.http('/favicon.ico', { headers: { 'If-None-Match': response.headers.get('etag')! } });
    expect(again.status).toBe(304);
  });
});
