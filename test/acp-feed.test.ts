// The catalogue as an ACP product feed (GET /acp/feed/products and `npm run feed:export`): each body validated against
// the OpenAPI document and ACP 2026-04-17's schema.feed.json (protocolFetch), prices in integer minor units of the
// target country's region, stock as ACP availability, and a country the store does not sell to refused in ACP's shape.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { protocolSchemaProblems } from '../src/protocols/schemas.js';
import { PROTOCOL_ENV, protocolFetch, testValidators } from './support/protocols.js';
import { startTestService, type TestService } from './support/service.js';

let api: TestService;
beforeAll(async () => {
  api = await startTestService({ env: PROTOCOL_ENV });
});
afterAll(async () => {
  await api?.close();
});

const TWO_PACK = 'variant_01tongue2pack';
const TRAVEL = 'variant_01tonguetravel';

function variantOf(body: any, id: string) {
  return body.products.flatMap((product: any) => product.variants).find((variant: any) => variant.id === id);
}

describe('ACP product feed', () => {
  it('prices every variant in the target country’s region, in minor units, with no token or API-Version', async () => {
    const us = await protocolFetch(api, '/acp/feed/products?target_country=US');
    expect(us.response.status).toBe(200);
    expect(us.response.headers.get('cache-control')).toBe('public, max-age=300');
    expect(us.response.headers.get('api-version')).toBe('2026-04-17');
    expect(us.body.products.map((product: any) => product.id)).toEqual(['prod_01tongue2pack', 'prod_01tonguetravel']);
    expect(variantOf(us.body, TWO_PACK)).toMatchObject({ price: { amount: 1299, currency: 'USD' } });
    expect(variantOf(us.body, TRAVEL)).toMatchObject({ price: { amount: 1999, currency: 'USD' } });

    const [product] = us.body.products;
    expect(product.description.html).toContain('<p>');
    expect(product.description.plain).not.toMatch(/<|>/);
    expect(product.media[0]).toMatchObject({ type: 'image', alt_text: product.title });

    const germany = await protocolFetch(api, '/acp/feed/products?target_country=de');
    const regionPrice = await api.service.deps
      .db('variant_prices')
      .where({ variant_id: TWO_PACK, region_id: 'reg_eu' })
      .first('amount');
    expect(variantOf(germany.body, TWO_PACK).price).toEqual({ amount: regionPrice.amount, currency: 'EUR' });
  });

  it('without a target country, is the default region’s feed', async () => {
    const implicit = await protocolFetch(api, '/acp/feed/products');
    const us = await protocolFetch(api, '/acp/feed/products?target_country=us');
    expect(implicit.body).toEqual(us.body);
  });

  it('shows stock as ACP availability, read when asked', async () => {
    const db = api.service.deps.db;
    const before = await db('variants').where({ id: TRAVEL }).first('inventory_quantity', 'allow_backorder');
    try {
      const statusAt = async (quantity: number, allowBackorder: boolean) => {
        await db('variants')
          .where({ id: TRAVEL })
          .update({ inventory_quantity: quantity, allow_backorder: allowBackorder });
        const { body } = await protocolFetch(api, '/acp/feed/products?target_country=US');
        return variantOf(body, TRAVEL).availability;
      };
      expect(await statusAt(11, false)).toEqual({ available: true, status: 'in_stock' });
      expect(await statusAt(10, false)).toEqual({ available: true, status: 'limited_stock' });
      expect(await statusAt(0, true)).toEqual({ available: true, status: 'backorder' });
      expect(await statusAt(0, false)).toEqual({ available: false, status: 'out_of_stock' });
    } finally {
      await db('variants').where({ id: TRAVEL }).update(before);
    }
  });

  it('refuses a country the store does not sell to, or a malformed one, in ACP’s error shape', async () => {
    const notServed = await protocolFetch(api, '/acp/feed/products?target_country=BR');
    expect(notServed.response.status).toBe(400);
    expect(notServed.body).toMatchObject({
      type: 'invalid_request',
      code: 'country_not_served',
      param: 'target_country',
    });
    expect(notServed.body.message).toContain('DE');

    for (const query of ['target_country=USA', 'target_country=1', 'target_country=US&target_country=DE']) {
      const malformed = await protocolFetch(api, `/acp/feed/products?${query}`);
      expect([malformed.response.status, malformed.body.code], query).toEqual([400, 'invalid_target_country']);
    }

    const post = await protocolFetch(api, '/acp/feed/products', { method: 'POST', body: '{}' });
    expect(post.response.status).toBe(405);
  });
});

describe('npm run feed:export', () => {
  it('writes the feed as ACP’s UpsertProductsRequest, read from a running service', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'src/acp-feed-export.ts', '--url', api.url, '--country', 'CA'],
      { timeout: 60_000 },
    );
    const request = JSON.parse(stdout);
    expect(protocolSchemaProblems(testValidators, 'acp.feed.UpsertProductsRequest', request)).toEqual([]);
    expect(variantOf(request, TWO_PACK).price.currency).toBe('CAD');
  });
});
