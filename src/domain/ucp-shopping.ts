// The catalogue and carts rendered in UCP's shapes (shopping/catalog_search.json, catalog_lookup.json, cart.json) of
// the version the request negotiated: 2026-08-25 and 2026-04-08 have the same shape for what this store fills. Pure.
// Amounts are integer minor units, currencies ISO 4217 upper case.
import type { ProductRow, VariantRow } from './catalog.js';
import type { ProtocolSession } from './protocol-session.js';
import {
  sessionTotalsOf,
  UCP_DISCOUNT,
  ucpDiscounts,
  ucpDiscountWarnings,
  ucpLineItems,
  type UcpLink,
  type UcpMessage,
  type UcpVersion,
} from './ucp-checkout.js';

export const UCP_CART = 'dev.ucp.shopping.cart';
export const UCP_CATALOG_SEARCH = 'dev.ucp.shopping.catalog.search';
export const UCP_CATALOG_LOOKUP = 'dev.ucp.shopping.catalog.lookup';

/** The catalog and cart operations (rest.openapi.json / mcp.openrpc.json names), beside the checkout's. */
export type UcpShoppingOperation =
  'search_catalog' | 'lookup_catalog' | 'get_product' | 'create_cart' | 'get_cart' | 'update_cart' | 'cancel_cart';

/** The capability each operation needs negotiated (a key of the negotiation), and whether it takes an idempotency key. */
export const UCP_SHOPPING_OPERATIONS: Record<
  UcpShoppingOperation,
  { capability: 'cart' | 'catalogSearch' | 'catalogLookup'; name: string; keyed: boolean }
> = {
  search_catalog: { capability: 'catalogSearch', name: UCP_CATALOG_SEARCH, keyed: false },
  lookup_catalog: { capability: 'catalogLookup', name: UCP_CATALOG_LOOKUP, keyed: false },
  get_product: { capability: 'catalogLookup', name: UCP_CATALOG_LOOKUP, keyed: false },
  create_cart: { capability: 'cart', name: UCP_CART, keyed: true },
  get_cart: { capability: 'cart', name: UCP_CART, keyed: false },
  update_cart: { capability: 'cart', name: UCP_CART, keyed: true },
  cancel_cart: { capability: 'cart', name: UCP_CART, keyed: true },
};

export function isUcpShoppingOperation(op: string): op is UcpShoppingOperation {
  return op in UCP_SHOPPING_OPERATIONS;
}

/** The `ucp` member of a catalog or cart answer (response_catalog_schema, response_cart_schema): no payment handlers. */
export function ucpShoppingEnvelope(
  version: UcpVersion,
  capability: string,
  status: 'success' | 'error' = 'success',
  extensions: string[] = [],
) {
  const names = [capability, ...extensions];
  return {
    version,
    status,
    capabilities: status === 'success' ? Object.fromEntries(names.map((name) => [name, [{ version }]])) : {},
  };
}

interface Price {
  amount: number;
  currency: string;
}

/** Whether a variant can be bought now, in UCP's well-known availability words. */
function availabilityOf(variant: VariantRow) {
  if (!variant.manage_inventory || variant.inventory_quantity > 0) return { available: true, status: 'in_stock' };
  if (variant.allow_backorder) return { available: true, status: 'backorder' };
  return { available: false, status: 'out_of_stock' };
}

export interface UcpVariantRendering {
  /** The request identifiers that resolved to this variant (lookup answers only). */
  inputs?: Array<{ id: string; match: 'exact' | 'featured' }>;
}

function toUcpVariant(variant: VariantRow & { price_amount: number }, currency: string, extra: UcpVariantRendering) {
  return {
    id: variant.id,
    title: variant.title,
    description: { plain: variant.title },
    ...(variant.sku ? { sku: variant.sku } : {}),
    price: { amount: variant.price_amount, currency },
    availability: availabilityOf(variant),
    ...(extra.inputs ? { inputs: extra.inputs } : {}),
  };
}

/** A product's variants priced in the region, the only ones UCP can show (a variant carries its price). */
export function pricedVariants(variants: VariantRow[]): Array<VariantRow & { price_amount: number }> {
  return variants.filter((variant): variant is VariantRow & { price_amount: number } => variant.price_amount !== null);
}

/**
 * A product (shopping/types/product.json) with the given variants, all priced in `currencyCode`; undefined when none
 * is (a product has at least one variant).
 */
export function toUcpProduct(
  product: ProductRow,
  variants: VariantRow[],
  currencyCode: string,
  inputsOf: (variant: VariantRow) => UcpVariantRendering = () => ({}),
) {
  const priced = pricedVariants(variants);
  if (!priced.length) return undefined;
  const currency = currencyCode.toUpperCase();
  const amounts = priced.map((variant) => variant.price_amount);
  const price = (amount: number): Price => ({ amount, currency });
  return {
    id: product.id,
    handle: product.handle,
    title: product.title,
    // The catalogue's copy is HTML; a product without copy is described by its title.
    description: product.description ? { html: product.description } : { plain: product.title },
    price_range: { min: price(Math.min(...amounts)), max: price(Math.max(...amounts)) },
    ...(product.thumbnail ? { media: [{ type: 'image', url: product.thumbnail, alt_text: product.title }] } : {}),
    variants: priced.map((variant) => toUcpVariant(variant, currency, inputsOf(variant))),
  };
}

export type UcpProduct = NonNullable<ReturnType<typeof toUcpProduct>>;

/**
 * A get_product answer's product (catalog_lookup.json#/$defs/detail_product): this store's variants differ by title
 * alone, one option axis (`Variant`, each value's id its variant's), with the requested variant (or the first buyable one)
 * selected.
 */
export function toUcpDetailProduct(product: UcpProduct, selectedVariantId: string | undefined) {
  const selected =
    product.variants.find((variant) => variant.id === selectedVariantId) ??
    product.variants.find((variant) => variant.availability.available) ??
    product.variants[0]!;
  return {
    ...product,
    // The selected variant first: a platform shows the first as featured.
    variants: [selected, ...product.variants.filter((variant) => variant !== selected)],
    selected: [{ name: 'Variant', id: selected.id, label: selected.title }],
    options: [
      {
        name: 'Variant',
        // A value's id is its variant's: a selection may name it (selected_option.json `id`).
        values: product.variants.map((variant) => ({
          id: variant.id,
          label: variant.title,
          available: variant.availability.available,
          exists: true,
        })),
      },
    ],
  };
}

export interface UcpCartRendering {
  version: UcpVersion;
  links: UcpLink[];
  messages: UcpMessage[];
  /** dev.ucp.shopping.discount negotiated on carts: the cart has `discounts` and warns of each code refused. */
  discountNegotiated: boolean;
}

/** A UCP cart (shopping/cart.json): an open cart priced as its checkout would be, totals estimated. */
export function toUcpCart(session: ProtocolSession, rendering: UcpCartRendering) {
  const { buyer } = session;
  return {
    ucp: ucpShoppingEnvelope(
      rendering.version,
      UCP_CART,
      'success',
      rendering.discountNegotiated ? [UCP_DISCOUNT] : [],
    ),
    id: session.id,
    line_items: ucpLineItems(session),
    ...(buyer && Object.values(buyer).some(Boolean)
      ? { buyer: Object.fromEntries(Object.entries(buyer).filter(([, value]) => Boolean(value))) }
      : {}),
    currency: session.currency.toUpperCase(),
    totals: sessionTotalsOf(session),
    ...(rendering.discountNegotiated ? { discounts: ucpDiscounts(session) } : {}),
    messages: [
      ...(session.unavailableLines
        ? [
            {
              type: 'error' as const,
              code: 'item_unavailable',
              severity: 'recoverable' as const,
              path: '$.line_items',
              content: `${session.unavailableLines} item(s) are no longer sold in this market and were left out of the cart and its totals.`,
              content_type: 'plain' as const,
            },
          ]
        : []),
      // As a checkout orders them: errors, the refused codes' warnings, other warnings, info.
      ...rendering.messages.filter((message) => message.type === 'error'),
      ...(rendering.discountNegotiated ? ucpDiscountWarnings(session) : []),
      ...rendering.messages.filter((message) => message.type !== 'error'),
    ],
    links: rendering.links,
  };
}
