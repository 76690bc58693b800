// UCP catalog search (dev.ucp.shopping.catalog.search): the answer is a valid search_response; the runner also uses
// it to find items to buy when the fixture names none.
import { randomUUID } from 'node:crypto';
import type { Answer, HttpClient, Json } from '../client.js';
import type { FixtureItem } from '../fixture.js';
import type { SchemaSet } from '../schemas.js';
import { expectThat, type Check } from './check.js';
import { ucpSpec, type UcpContext } from './ucp-context.js';

export const CATALOG_SEARCH = 'dev.ucp.shopping.catalog.search';

export async function searchCatalog(client: HttpClient, endpoint: string, profile: string): Promise<Answer> {
  return client.request(`${endpoint.replace(/\/+$/, '')}/catalog/search`, {
    method: 'POST',
    headers: {
      'UCP-Agent': `profile="${profile}"`,
      'Request-Id': randomUUID(),
      'Content-Type': 'application/json',
      Accept: 'application/json',
    },
    body: JSON.stringify({ query: '' }),
  });
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

export const ucpCatalogChecks: Check<UcpContext & { restEndpoint?: string; profile: string }>[] = [
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
