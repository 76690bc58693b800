// The catalogue as an ACP product feed for one target country: what GET /acp/feed/products answers and what
// `npm run feed:export` writes. The country picks the region, the region the prices (src/domain/acp-feed.ts).
import { listRegionsWithCountries, readProductPage } from '../db/repositories/catalog.js';
import type { Db } from '../db/knex.js';
import { feedProduct, type FeedProduct } from '../domain/acp-feed.js';

/** The most products one feed holds (the whole catalogue, bounded so that one request's work is too). */
export const FEED_PRODUCT_LIMIT = 1000;

export type FeedOutcome =
  | { kind: 'feed'; targetCountry: string; products: FeedProduct[] }
  /** No region of the store serves the country (or it is not an ISO 3166-1 alpha-2 code). */
  | { kind: 'country_not_served'; targetCountry: string; served: string[] };

/**
 * The feed for `targetCountry` (ISO 3166-1 alpha-2, any case), or for the default region's first country when none is
 * named. Two statements: the regions with their countries, then the products priced in the country's region.
 */
export async function readAcpFeed(db: Db, targetCountry: string | undefined): Promise<FeedOutcome> {
  const { regions, countries } = await listRegionsWithCountries(db);
  const served = countries.map((country) => country.iso_2.toUpperCase()).sort();
  const defaultRegion = regions.find((region) => region.is_default) ?? regions[0];
  const wanted =
    targetCountry?.toUpperCase() ??
    countries.find((country) => country.region_id === defaultRegion?.id)?.iso_2.toUpperCase();
  const country = countries.find((candidate) => candidate.iso_2.toUpperCase() === wanted);
  if (!wanted || !country) return { kind: 'country_not_served', targetCountry: targetCountry ?? '', served };
  const page = await readProductPage(db, {
    regionId: country.region_id,
    filter: {},
    limit: FEED_PRODUCT_LIMIT,
    offset: 0,
    variants: true,
  });
  const region = page.region;
  const products = region
    ? page.products.flatMap((product) => feedProduct(product, product.variants ?? [], region) ?? [])
    : [];
  return { kind: 'feed', targetCountry: wanted, products };
}
