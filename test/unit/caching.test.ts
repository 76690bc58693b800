// Only the operations the contract marks `x-cacheable` reach the read cache, and the start fails when one of them is
// not an anonymous GET: a cached answer to a caller with credentials would be served to the next caller.
import { describe, expect, it } from 'vitest';
import type { Document } from 'openapi-backend';
import { loadDocument } from '../../src/document.js';
import { cacheableOperations, createReadCache } from '../../src/http/caching.js';

function documentWith(operations: object, security?: object[]): Document {
  return {
    openapi: '3.1.0',
    info: { title: 'cacheable', version: '1' },
    ...(security ? { security } : {}),
    paths: { '/things': operations },
  } as Document;
}

const responses = { '200': { description: 'ok' } };

describe('cacheable operations', () => {
  it("are the contract's anonymous catalogue reads", () => {
    expect(cacheableOperations(loadDocument())).toEqual([
      { operationId: 'listProducts', method: 'GET', path: '/api/store/products' },
      { operationId: 'getProduct', method: 'GET', path: '/api/store/products/{id}' },
      { operationId: 'listReviews', method: 'GET', path: '/api/store/reviews' },
      { operationId: 'listRegions', method: 'GET', path: '/api/store/regions' },
      { operationId: 'listCollections', method: 'GET', path: '/api/store/collections' },
    ]);
  });

  it('may be anonymous GETs only', () => {
    const anonymous = { operationId: 'listThings', security: [], 'x-cacheable': true, responses };
    expect(cacheableOperations(documentWith({ get: anonymous }))).toHaveLength(1);
    expect(cacheableOperations(documentWith({ get: { ...anonymous, security: [{}] } }))).toHaveLength(1);
    expect(() => cacheableOperations(documentWith({ post: anonymous }))).toThrow(/only GET/);
  });

  it.each([
    ['its own security requirement', { security: [{ bearer: ['catalog:read'] }] }, undefined],
    ['credentials as an option', { security: [{}, { bearer: [] }] }, undefined],
    ["the document's security requirement", {}, [{ bearer: [] }]],
  ])('stop the start when one accepts credentials through %s', (_name, security, documentSecurity) => {
    const operation = { operationId: 'listThings', 'x-cacheable': true, responses, ...security };
    expect(() => cacheableOperations(documentWith({ get: operation }, documentSecurity))).toThrow(
      /GET \/things \(listThings\) is marked x-cacheable but accepts credentials/,
    );
  });
});

describe('the read cache', () => {
  it('is bounded in bytes, not only in entries: large entries push the oldest out well before the count does', async () => {
    const cache = createReadCache();
    const text = 'x'.repeat(256 * 1024);
    const result = { text, bytes: Buffer.from(text) };
    // 100 entries of 768 kB each (the text as UTF-16 and its bytes): 75 MB, far under 1,000 entries.
    for (let index = 0; index < 100; index++) await cache.fetchValue(`tools/call big ${index}`, async () => result);
    const kept = Array.from({ length: 100 }, (_, index) => cache.peekValue(`tools/call big ${index}`)).filter(Boolean);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length * 768 * 1024).toBeLessThanOrEqual(16 * 1024 * 1024);
    expect(cache.peekValue('tools/call big 99')).toBe(result);
    expect(cache.peekValue('tools/call big 0')).toBeUndefined();
  });

  it('answers a read whose load was still running when newer entries pushed it out', async () => {
    const cache = createReadCache();
    let finish!: (value: { value: string }) => void;
    const slow = cache.fetchValue('slow', () => new Promise<string>((resolve) => (finish = (v) => resolve(v.value))));
    // More than the cache's 1,000 entries, each loaded at once: the slow one, oldest, is evicted while it loads.
    for (let index = 0; index < 1_100; index++) await cache.fetchValue(`quick ${index}`, async () => `quick ${index}`);
    finish({ value: 'slow answer' });
    await expect(slow).resolves.toBe('slow answer');
  });
});
