// What every UCP check is given: the transport under test, the items and codes to use, the platform profiles the
// merchant can fetch, and where the checkouts received are collected for the totals check.
import type { HttpClient, Json } from '../client.js';
import type { Fixture, FixtureItem } from '../fixture.js';
import type { SchemaSet } from '../schemas.js';
import { skip } from './check.js';
import type { UcpTransport } from './ucp-transport.js';

export interface UcpProfiles {
  /** Every capability the merchant advertises, at the tested version. */
  full: string;
  /** The same without the discount capability (undefined when an external profile is used). */
  noDiscount?: string;
  /** Without the checkout capability. */
  noCheckout?: string;
  /** A profile at a version no merchant supports. */
  unsupportedVersion?: string;
  /** A URL that answers 404. */
  missing?: string;
}

export interface UcpContext {
  client: HttpClient;
  schemas: SchemaSet;
  version: string;
  transport: UcpTransport;
  /** The merchant's capabilities at the tested version. */
  capabilities: Set<string>;
  items: FixtureItem[];
  /** Why there are no items, when there are none. */
  itemsReason?: string;
  fixture: Fixture;
  profiles: UcpProfiles;
  /** The merchant proceeds without a usable platform profile (UCP_PLATFORM_PROFILE_POLICY=lenient and alike). */
  lenient: boolean;
  checkouts: Json[];
}

/** Where a check's requirement is written; the runner puts the tested version in for {version}. */
export const ucpSpec = (page: string, section: string) =>
  `UCP {version}, ${page} › ${section} (https://ucp.dev/{version}/specification/${page}/)`;

/** The fixture's (or the catalog's) items as UCP line items; skips the check when there are none. */
export function ucpLines(context: UcpContext, extraQuantity = 0): Json[] {
  if (!context.items.length) skip(context.itemsReason ?? 'no items to buy');
  return context.items.map((item) => ({ item: { id: item.id }, quantity: item.quantity + extraQuantity }));
}

export function ucpCreateBody(context: UcpContext, extra: Json = {}): Json {
  const buyer = context.fixture.buyer;
  return {
    line_items: ucpLines(context),
    ...(buyer && Object.keys(buyer).length ? { buyer } : {}),
    ...(context.fixture.address?.address_country
      ? { context: { address_country: context.fixture.address.address_country } }
      : {}),
    ...extra,
  };
}

/** An item id no merchant sells. */
export const NO_SUCH_ITEM = 'conformance-no-such-item-7f3a9c';
