// Resolves the items of a checkout request to variants and cart lines. Pure: the caller loads the candidate
// variants (src/db/repositories/catalog.ts findPurchasableVariants) and passes them in.
import type { components } from '../../codegen/types.js';
import { BadRequest, type BadRequestReason } from './errors.js';

export const MAX_QUANTITY = 100;
const IDENTIFIERS = ['id', 'variant_id', 'handle', 'sku'] as const;

type CheckoutItemInput = components['schemas']['CheckoutItemInput'];

/** A variant that can be put in a cart, as the repository loads it (findPurchasableVariants). */
/** A variant as checkout needs it: how it can be referred to, its stock and its price in one region. */
export interface PurchasableVariantRow {
  id: string;
  sku: string | null;
  title: string;
  product_title: string;
  product_handle: string;
  manage_inventory: boolean;
  allow_backorder: boolean;
  inventory_quantity: number;
  price_amount: number | null;
}

export type ItemReference =
  | { kind: 'variant_id'; value: string; param: string }
  | { kind: 'handle'; value: string; param: string }
  | { kind: 'sku'; value: string; param: string };

/** Names an item and its fields in errors: `items[2]` and `items[2].quantity`, or `body` and `quantity` for a body that is one item. */
export type ItemPath = (field?: string) => string;

export interface RequestedLine {
  variant: PurchasableVariantRow;
  quantity: number;
  /** Where the line came from in the request, for error messages. */
  at: ItemPath;
}

/** The item at `base` (`items[2]`, `line_items[0]`) and its fields (`items[2].quantity`). */
export function pathUnder(base: string): ItemPath {
  return (field) => (field === undefined ? base : `${base}.${field}`);
}

/** The `index`-th entry of a request's `items`. */
export function itemPath(index: number): ItemPath {
  return pathUnder(`items[${index}]`);
}

/** A body that is itself one item: its fields are top-level (`quantity`), the item as a whole is the `body`. */
export const BODY_ITEM: ItemPath = (field) => field ?? 'body';

function invalidItem(
  reason: BadRequestReason,
  message: string,
  param: string,
  details?: Record<string, unknown>,
  resolution?: string,
): BadRequest {
  return new BadRequest(reason, message, { param, details, resolution });
}

/** `id` is a variant id when it starts with `variant_`, a product handle otherwise; aliases name their kind. */
export function referenceOf(item: CheckoutItemInput, at: ItemPath): ItemReference {
  const given = IDENTIFIERS.filter((name) => item[name] !== undefined);
  if (given.length === 0) {
    throw invalidItem(
      'missing_item_identifier',
      `${at()} needs an identifier: id (a variant id or product handle), variant_id, handle or sku.`,
      at('id'),
    );
  }
  if (given.length > 1)
    throw invalidItem(
      'ambiguous_item',
      `${at()} has several identifiers (${given.join(', ')}); send exactly one.`,
      at(),
    );
  const name = given[0]!;
  const value = item[name]!;
  const param = at(name);
  if (name === 'id')
    return value.startsWith('variant_') ? { kind: 'variant_id', value, param } : { kind: 'handle', value, param };
  return { kind: name, value, param };
}

/** The references of the items that name exactly one identifier; the others fail when the lines are resolved. */
export function wellFormedReferences(items: CheckoutItemInput[]): ItemReference[] {
  return items.flatMap((item, index) =>
    IDENTIFIERS.filter((name) => item[name] !== undefined).length === 1 ? [referenceOf(item, itemPath(index))] : [],
  );
}

function matchesReference(variant: PurchasableVariantRow, ref: ItemReference): boolean {
  if (ref.kind === 'variant_id') return variant.id === ref.value;
  if (ref.kind === 'sku') return variant.sku === ref.value;
  return variant.product_handle === ref.value;
}

/** The one variant the item names among the candidates (see findPurchasableVariants). */
export function variantOf(
  item: CheckoutItemInput,
  at: ItemPath,
  candidates: PurchasableVariantRow[],
): PurchasableVariantRow {
  const ref = referenceOf(item, at);
  const matches = candidates.filter((variant) => matchesReference(variant, ref));
  if (matches.length === 0) {
    const what = ref.kind === 'variant_id' ? 'variant' : ref.kind === 'sku' ? 'SKU' : 'product handle';
    throw invalidItem(
      'unknown_item',
      `No ${what} "${ref.value}" in the catalog.`,
      ref.param,
      undefined,
      'List products with GET /api/store/products.',
    );
  }
  if (matches.length > 1) {
    const ids = matches.map((variant) => variant.id);
    throw invalidItem(
      'variant_required',
      `Product "${ref.value}" has several variants; send one of their ids: ${ids.join(', ')}.`,
      ref.param,
      { variant_ids: ids },
    );
  }
  return matches[0]!;
}

/** A line can be bought when its variant is priced in the region, the quantity is at most 100 and in stock. */
export function checkAvailable(line: RequestedLine, currencyCode: string): void {
  const { variant, quantity, at } = line;
  if (variant.price_amount === null) {
    throw invalidItem(
      'item_unavailable_in_region',
      `${variant.id} is not sold in ${currencyCode.toUpperCase()}; choose another region.`,
      at(),
    );
  }
  if (quantity > MAX_QUANTITY)
    throw invalidItem(
      'quantity_too_large',
      `${variant.id} is requested ${quantity} times in all; the most per line is ${MAX_QUANTITY}.`,
      at('quantity'),
    );
  if (variant.manage_inventory && !variant.allow_backorder && quantity > variant.inventory_quantity) {
    throw invalidItem(
      'insufficient_stock',
      `Only ${variant.inventory_quantity} of ${variant.id} are available; requested ${quantity}.`,
      at('quantity'),
      {
        available: variant.inventory_quantity,
      },
    );
  }
}

/** One line per variant (the same variant twice merges, quantities summed), in first-mention order. */
export function resolveLines(
  items: CheckoutItemInput[],
  candidates: PurchasableVariantRow[],
  currencyCode: string,
): RequestedLine[] {
  const lines = new Map<string, RequestedLine>();
  items.forEach((item, index) => {
    const at = itemPath(index);
    const variant = variantOf(item, at, candidates);
    const quantity = item.quantity ?? 1;
    const existing = lines.get(variant.id);
    if (existing) existing.quantity += quantity;
    else lines.set(variant.id, { variant, quantity, at });
  });
  for (const line of lines.values()) checkAvailable(line, currencyCode);
  return [...lines.values()];
}
