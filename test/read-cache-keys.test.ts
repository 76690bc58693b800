// The read cache is keyed by what a read means, not how it is spelled (src/http/read-keys.ts, issue #29): re-encoding,
// reordering, repeating a `fields` token, spelling out a default or adding empty parameters must not make a read miss
// (each miss was four statements), and reads that mean different things must never share an answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateResponse } from './support/contract.js';
import { statementsDuring } from './support/database.js';
import { startTestService, type TestService } from './support/service.js';

/** Every table a catalogue read touches. */
const CATALOG_TABLES = [
  'products',
  'variants',
  'variant_prices',
  'regions',
  'region_countries',
  'reviews',
  'collections',
];

let api: TestService;

beforeAll(async () => {
  api = await startTestService();
});
afterAll(async () => {
  await api?.close();
});

interface Answer {
  status: number;
  etag: string | null;
  body: string;
}

/**
 * A GET of a raw target, validated against the contract as `contractPath` (the test's contract helper matches paths
 * as the templates spell them; a literal segment sent percent-encoded is the same operation).
 */
async function read(target: string, contractPath = target): Promise<Answer> {
  const response = await fetch(api.url + target);
  const body = await response.text();
  validateResponse('GET', new URL(contractPath, api.url), response, body);
  return { status: response.status, etag: response.headers.get('etag'), body };
}

/** The statements the catalogue's tables receive while `run` runs. */
const statements = (run: () => Promise<unknown>) => statementsDuring(api.service.deps.db, CATALOG_TABLES, run);

describe('every spelling of one read shares one cache entry', () => {
  it.each([
    [
      'the products with prices',
      [
        '/api/store/products?fields=*variants.calculated_price',
        '/api/store/products?fields=%2Avariants.calculated_price',
        '/api/store/products?fields=*%76ariants.calculated_price',
        '/api/store/products?fields=%2a%76%61riants%2ecalculated_price',
        '/api/store/products?fields=+variants.calculated_price',
        '/api/store/products?fields=%2Bvariants.calculated_price',
        '/api/store/products?fields=*variants.calculated_price,*variants.calculated_price',
        '/api/store/products?fields=,*variants.calculated_price,,',
        '/api/store/products?limit=12&fields=*variants.calculated_price',
        '/api/store/products?fields=*variants.calculated_price&offset=0&limit=012',
        '/api/store/products?offset=%30&fields=*variants.calculated_price&limit=1%32',
        '/api/store/products?&&fields=*variants.calculated_price&',
        '/api/store/products/?fields=*variants.calculated_price',
        ['/api/store/products//?fields=*variants.calculated_price', '/api/store/products'],
        ['/api/store/%70roducts?fields=*variants.calculated_price', '/api/store/products'],
      ],
    ],
    [
      'one product with prices and stock',
      [
        '/api/store/products/prod_01tongue2pack?fields=*variants.calculated_price,+variants.inventory_quantity',
        '/api/store/products/prod%5F01tongue2pack?fields=*variants.calculated_price,+variants.inventory_quantity',
        '/api/store/products/prod_01tongue2pack?fields=%2Bvariants.inventory_quantity,*variants.calculated_price',
        '/api/store/products/prod_01tongue2pack/?fields=+variants.inventory_quantity%2C+variants.calculated_price',
      ],
    ],
    [
      'the products by default',
      [
        '/api/store/products',
        '/api/store/products?',
        '/api/store/products?fields=',
        '/api/store/products?fields=,',
        '/api/store/products?limit=12&offset=0',
        '/api/store/products?offset=0&limit=12&fields=',
      ],
    ],
    [
      'one product’s reviews',
      [
        '/api/store/reviews?product_id=prod_01tongue2pack',
        '/api/store/reviews?product_id=prod%5f01tongue2pack',
        '/api/store/reviews/?product_id=%70rod_01tongue2pack&',
      ],
    ],
    ['the regions', ['/api/store/regions', '/api/store/regions?', '/api/store/regions/', '/api/store/regions?&']],
  ])('%s: one database statement, one answer', async (_name, spellings) => {
    api.service.deps.readCache.clear();
    const answers: Answer[] = [];
    const sent = await statements(async () => {
      for (const spelling of spellings) {
        const [target, contractPath] = Array.isArray(spelling) ? spelling : [spelling, spelling];
        answers.push(await read(target!, contractPath));
      }
    });
    expect(answers.map((answer) => answer.status)).toEqual(spellings.map(() => 200));
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    expect(new Set(answers.map((answer) => answer.etag)).size).toBe(1);
    expect(sent).toBe(1);
  });
});

describe('reads that mean different things never share an answer', () => {
  const MEANINGS = [
    '/api/store/products',
    '/api/store/products?fields=*variants.calculated_price',
    '/api/store/products?fields=+variants.inventory_quantity',
    '/api/store/products?fields=*variants.calculated_price,+variants.inventory_quantity',
    '/api/store/products?fields=*variants.calculated_price,-variants.sku',
    '/api/store/products?fields=title',
    '/api/store/products?fields=title,variants',
    '/api/store/products?fields=-variants',
    '/api/store/products?fields=*variants.calculated_price&region_id=reg_eu',
    '/api/store/products?limit=1',
    '/api/store/products?limit=1&offset=1',
    '/api/store/products?offset=1',
    '/api/store/products?handle=tongue-scraper-2-pack',
    '/api/store/products/prod_01tongue2pack',
    '/api/store/products/prod_01tonguetravel',
    '/api/store/products/prod_01tongue2pack?fields=*variants.calculated_price',
    '/api/store/reviews',
    '/api/store/reviews?product_id=prod_01tongue2pack',
    '/api/store/reviews?product_id=prod_01tonguetravel',
  ];

  it('each is answered as it is alone, whatever the cache holds', async () => {
    const alone = new Map<string, Answer>();
    for (const target of MEANINGS) {
      api.service.deps.readCache.clear();
      alone.set(target, await read(target));
    }
    expect(new Set([...alone.values()].map((answer) => answer.body)).size).toBe(MEANINGS.length);
    // Every read in turn with all of them cached: each still gets its own answer, from one statement each.
    api.service.deps.readCache.clear();
    const sent = await statements(async () => {
      for (const round of [1, 2]) {
        for (const target of MEANINGS)
          expect(await read(target), `${target} (round ${round})`).toEqual(alone.get(target));
      }
    });
    expect(sent).toBe(MEANINGS.length);
  });

  it.each([
    ['a repeated parameter', '/api/store/products?limit=1', '/api/store/products?limit=1&limit=1'],
    ['a repeated empty fields', '/api/store/products', '/api/store/products?fields=&fields='],
    ['an empty handle', '/api/store/products', '/api/store/products?handle='],
    ['an empty region', '/api/store/products', '/api/store/products?region_id='],
    ['an unknown parameter', '/api/store/regions', '/api/store/regions?x'],
    ['an unknown field', '/api/store/products', '/api/store/products?fields=colour'],
    ['a limit out of range', '/api/store/products?limit=100', '/api/store/products?limit=0100.5'],
    ['a decoded slash in an id', '/api/store/products/prod_01tongue2pack', '/api/store/products/prod_01tongue2pack%2F'],
  ])('%s is refused even with a read like it cached', async (_name, cached, refused) => {
    api.service.deps.readCache.clear();
    expect((await read(cached)).status).toBe(200);
    expect((await read(refused)).status).toBe(400);
    expect((await read(refused)).status).toBe(400);
  });
});
