// UCP catalog search (dev.ucp.shopping.catalog.search): the answer is a valid search_response; the runner also uses
// it to find items to buy when the fixture names none.
import { randomUUID } from 'node:crypto';
import type { Answer, HttpClient, Json } from '../client.js';
import type { FixtureItem } from '../fixture.js';
import type { SchemaSet } from '../schemas.js';
import { expectThat, type Check } from './check.js';
import { ucpLines, ucpSpec, type UcpContext } from './ucp-context.js';

export const CATALOG_SEARCH = 'dev.ucp.shopping.catalog.search';
export const CATALOG_LOOKUP = 'dev.ucp.shopping.catalog.lookup';

/** A catalog POST (search, lookup, product): it only reads, so it takes no Idempotency-Key. */
function catalogPost(client: HttpClient, endpoint: string, profile: string, path: string, body: Json): Promise<Answer> {
  return client.request(`${endpoint.replace(/\/+$/, '')}${path}`, {
    method: 'POST',
    headers: {
      'UCP-Agent': `profile="${profile}"`,
      'Request-Id': randomUUID(),
      'Content-Type': 'application/json',
      Accept: 'application/json',
    },
    body: JSON.stringify(body),
  });
}

export async function searchCatalog(client: HttpClient, endpoint: string, profile: string): Promise<Answer> {
  return catalogPost(client, endpoint, profile, '/catalog/search', { query: '' });
}

/** Fails the check unless the answer is a 200 whose body is valid against the named schema. */
function expectValid(context: UcpContext, answer: Answer, schema: string, what: string): void {
  expectThat(answer.status === 200, '200', answer);
  const problems = context.schemas.problems(schema, answer.body);
  expectThat(
    problems.length === 0,
    `a body valid against UCP ${context.version} ${what}`,
    answer,
    `${problems.length} schema errors, first: ${problems[0]?.path} ${problems[0]?.message}`,
  );
}

/** The first variant of each product found, one of each, as items to buy (at most three). */
export function itemsFromSearch(schemas: SchemaSet, answer: Answer): FixtureItem[] {
  if (answer.status !== 200 || schemas.problems('catalog_search_response', answer.body).length) return [];
  const products: Json[] = answer.body.products ?? [];
  return products
    .map((product) => product.variants?.find((variant: Json) => variant.availability?.available !== false)?.id)
    .filter((id): id is string => typeof id === 'string')
    .slice(0, 3)
    .map((id) => ({ id, quantity: 1 }));
}

type CatalogContext = UcpContext & { restEndpoint?: string; profile: string };

export const ucpCatalogChecks: Check<CatalogContext>[] = [
  {
    id: 'ucp.catalog.search',
    title: 'catalog search answers a valid search_response',
    spec: ucpSpec('catalog', 'Search'),
    async run(context) {
      expectThat(context.restEndpoint, 'a REST endpoint to search');
      const answer = await searchCatalog(context.client, context.restEndpoint, context.profile);
      expectThat(answer.status === 200, '200', answer);
      const problems = context.schemas.problems('catalog_search_response', answer.body);
      expectThat(
        problems.length === 0,
        `a body valid against UCP ${context.version} catalog_search.json#/$defs/search_response`,
        answer,
        `${problems.length} schema errors, first: ${problems[0]?.path} ${problems[0]?.message}`,
      );
    },
  },
];

/** UCP catalog lookup (dev.ucp.shopping.catalog.lookup): lookup_catalog and get_product of the items to buy. */
export const ucpCatalogLookupChecks: Check<CatalogContext>[] = [
  {
    id: 'ucp.catalog.lookup',
    title: 'lookup by variant id answers each variant with the input that named it',
    spec: ucpSpec('catalog', 'Lookup'),
    async run(context) {
      expectThat(context.restEndpoint, 'a REST endpoint to look up');
      const ids = ucpLines(context).map((line) => line.item.id as string);
      const answer = await catalogPost(context.client, context.restEndpoint, context.profile, '/catalog/lookup', {
        ids,
      });
      expectValid(context, answer, 'catalog_lookup_response', 'catalog_lookup.json#/$defs/lookup_response');
      const inputs = new Set(
        (answer.body.products as Json[]).flatMap((product) =>
          (product.variants as Json[]).flatMap((variant) => (variant.inputs as Json[]).map((input) => input.id)),
        ),
      );
      const missing = ids.filter((id) => !inputs.has(id));
      expectThat(missing.length === 0, `every id looked up among the variants' inputs`, answer, `missing ${missing}`);
    },
  },
  {
    id: 'ucp.catalog.lookup-filters',
    title: 'lookup applies a price filter in the presentment currency, or says at $.filters that it did not',
    spec: ucpSpec('catalog', 'Lookup'),
    async run(context) {
      const endpoint = context.restEndpoint;
      expectThat(endpoint, 'a REST endpoint to look up');
      const ids = ucpLines(context).map((line) => line.item.id as string);
      const lookup = async (body: Json) => {
        const answer = await catalogPost(context.client, endpoint, context.profile, '/catalog/lookup', body);
        expectValid(context, answer, 'catalog_lookup_response', 'catalog_lookup.json#/$defs/lookup_response');
        return answer;
      };
      const prices = (answer: Answer): Json[] =>
        (answer.body.products as Json[]).flatMap((product) => (product.variants as Json[]).map((v) => v.price));
      const all = await lookup({ ids });
      const [cheapest] = prices(all).sort((a, b) => a.amount - b.amount);
      expectThat(cheapest, 'a priced variant among the items looked up', all);
      // Below the cheapest price, in its currency (price_filter.json's denomination, context.currency).
      const max = Math.max(0, cheapest.amount - 1);
      const filtered = await lookup({ ids, context: { currency: cheapest.currency }, filters: { price: { max } } });
      const above = prices(filtered).filter((price) => price.amount > max);
      const said = ((filtered.body.messages ?? []) as Json[]).some((message) =>
        String(message.path ?? '').startsWith('$.filters'),
      );
      expectThat(
        above.length === 0 || said,
        `no variant priced above ${max} ${cheapest.currency}, or a message at $.filters`,
        filtered,
        `${above.length} above`,
      );
    },
  },
  {
    id: 'ucp.catalog.product',
    title: 'get_product of an item answers its product with that variant',
    spec: ucpSpec('catalog', 'Get Product'),
    async run(context) {
      expectThat(context.restEndpoint, 'a REST endpoint to look up');
      const [line] = ucpLines(context);
      const id = line!.item.id as string;
      const answer = await catalogPost(context.client, context.restEndpoint, context.profile, '/catalog/product', {
        id,
      });
      expectValid(context, answer, 'catalog_get_product_response', 'catalog_get_product_response');
      const variants: Json[] = answer.body.product?.variants ?? [];
      expectThat(
        variants.some((variant) => variant.id === id),
        `product with variant ${id}`,
        answer,
      );
    },
  },
];
