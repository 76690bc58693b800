// Resolves the items a request names to variants and cart lines: the one set of rules and messages for every surface
// (REST, agent carts, MCP, ACP, UCP). Pure: the caller loads the candidate variants (the create's read, or
// findPurchasableVariants) and passes them in. Every problem is collected; REST answers the first, the protocols all.
import type { components } from '../../codegen/types.js';
import { BadRequest } from './errors.js';

export const MAX_QUANTITY = 100;
const IDENTIFIERS = ['id', 'variant_id', 'handle', 'sku'] as const;

type CheckoutItemInput = components['schemas']['CheckoutItemInput'];

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

/**
 * What names an item: REST's variant id, product handle or SKU, or a protocol's item id (only `variant_…` ids name
 * items there); `param` is where the reference is in the request.
 */
export interface ItemReference {
  kind: 'variant_id' | 'handle' | 'sku' | 'item_id';
  value: string;
  param: string;
}

export type LineProblemReason =
  | 'missing_item_identifier'
  | 'ambiguous_item'
  | 'unknown_item'
  | 'variant_required'
  | 'item_unavailable_in_region'
  | 'quantity_too_large'
  | 'insufficient_stock';

/** Why a requested line cannot be bought, where in the request, in words every surface shows. */
export interface LineProblem {
  reason: LineProblemReason;
  param: string;
  message: string;
  /** What the buyer can do about it, as a clause (REST adds it to the message). */
  remedy?: string;
  details?: Record<string, unknown>;
}

/** One requested line in any surface's terms. */
export interface RequestedItem {
  /** What names the item, or why nothing does (REST: no identifier, or several). */
  ref: ItemReference | LineProblem;
  quantity: number;
  /** A line id the request names (UCP update): kept when it is one of the session's lines. */
  lineId?: string | undefined;
  /** Where the item is (REST `items[2]`; the protocols name an item by its id's path) and where its quantity is. */
  itemParam: string;
  quantityParam: string;
}

/** A line resolved to its variant: repeats of one variant merged, quantities summed, the first mention kept. */
export interface ResolvedLine<Variant extends PurchasableVariantRow = PurchasableVariantRow> {
  variant: Variant;
  quantity: number;
  lineId?: string | undefined;
  first: RequestedItem;
}

/** Names an item and its fields in errors: `items[2]` and `items[2].quantity`, or `body` and `quantity` for a body that is one item. */
export type ItemPath = (field?: string) => string;

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

const isProblem = (ref: ItemReference | LineProblem): ref is LineProblem => 'reason' in ref;

/** `id` is a variant id when it starts with `variant_`, a product handle otherwise; aliases name their kind. */
function referenceOf(item: CheckoutItemInput, at: ItemPath): ItemReference | LineProblem {
  const given = IDENTIFIERS.filter((name) => item[name] !== undefined);
  if (given.length === 0) {
    return {
      reason: 'missing_item_identifier',
      param: at('id'),
      message: `${at()} needs an identifier: id (a variant id or product handle), variant_id, handle or sku.`,
    };
  }
  if (given.length > 1)
    return {
      reason: 'ambiguous_item',
      param: at(),
      message: `${at()} has several identifiers (${given.join(', ')}); send exactly one.`,
    };
  const name = given[0]!;
  const value = item[name]!;
  const param = at(name);
  if (name === 'id') return { kind: value.startsWith('variant_') ? 'variant_id' : 'handle', value, param };
  return { kind: name, value, param };
}

/** A REST item (checkout create, agent cart) in the resolver's terms. */
export function requestedItem(item: CheckoutItemInput, at: ItemPath): RequestedItem {
  return { ref: referenceOf(item, at), quantity: item.quantity ?? 1, itemParam: at(), quantityParam: at('quantity') };
}

/** A REST request's `items` in the resolver's terms. */
export function requestedItems(items: CheckoutItemInput[]): RequestedItem[] {
  return items.map((item, index) => requestedItem(item, itemPath(index)));
}

/** The references the requested items name (the others are problems already), to read their candidates. */
export function referencesOf(requested: RequestedItem[]): ItemReference[] {
  return requested.flatMap(({ ref }) => (isProblem(ref) ? [] : [ref]));
}

/** The references to read candidates for, by kind; of a protocol's item ids, only `variant_…` ones can name an item. */
export function variantReferences(refs: readonly ItemReference[]): {
  variantIds: string[];
  skus: string[];
  productHandles: string[];
} {
  const of = (kind: ItemReference['kind']) => refs.filter((ref) => ref.kind === kind).map((ref) => ref.value);
  const itemIds = of('item_id').filter((id) => id.startsWith('variant_'));
  return {
    variantIds: itemIds.length ? [...of('variant_id'), ...new Set(itemIds)] : of('variant_id'),
    skus: of('sku'),
    productHandles: of('handle'),
  };
}

function matchesReference(variant: PurchasableVariantRow, ref: ItemReference): boolean {
  if (ref.kind === 'variant_id' || ref.kind === 'item_id') return variant.id === ref.value;
  if (ref.kind === 'sku') return variant.sku === ref.value;
  return variant.product_handle === ref.value;
}

const UNKNOWN_ITEM: Record<ItemReference['kind'], (value: string) => string> = {
  variant_id: (value) => `No variant "${value}" in the catalog.`,
  sku: (value) => `No SKU "${value}" in the catalog.`,
  handle: (value) => `No product handle "${value}" in the catalog.`,
  item_id: (value) => `No purchasable item '${value}' in this store; items are named by variant id (variant_…).`,
};

/** The one variant the reference names among the candidates, or why there is none. */
export function matchVariant<Variant extends PurchasableVariantRow>(
  ref: ItemReference | LineProblem,
  candidates: readonly Variant[],
): Variant | LineProblem {
  if (isProblem(ref)) return ref;
  const matches = candidates.filter((variant) => matchesReference(variant, ref));
  if (matches.length === 0)
    return { reason: 'unknown_item', param: ref.param, message: UNKNOWN_ITEM[ref.kind](ref.value) };
  if (matches.length > 1) {
    const ids = matches.map((variant) => variant.id);
    return {
      reason: 'variant_required',
      param: ref.param,
      message: `Product "${ref.value}" has several variants; send one of their ids: ${ids.join(', ')}.`,
      details: { variant_ids: ids },
    };
  }
  return matches[0]!;
}

/** A line can be bought when its variant is priced in the region, the quantity is at most 100 and in stock. */
export function availabilityProblem(
  variant: PurchasableVariantRow,
  quantity: number,
  where: Pick<RequestedItem, 'itemParam' | 'quantityParam'>,
  currencyCode: string,
): LineProblem | undefined {
  if (variant.price_amount === null)
    return {
      reason: 'item_unavailable_in_region',
      param: where.itemParam,
      message: `${variant.id} is not sold in ${currencyCode.toUpperCase()}.`,
      remedy: 'choose another region',
    };
  if (quantity > MAX_QUANTITY)
    return {
      reason: 'quantity_too_large',
      param: where.quantityParam,
      message: `${variant.id} is requested ${quantity} times in all; the most per line is ${MAX_QUANTITY}.`,
    };
  if (variant.manage_inventory && !variant.allow_backorder && quantity > variant.inventory_quantity)
    return {
      reason: 'insufficient_stock',
      param: where.quantityParam,
      message: `Only ${variant.inventory_quantity} of ${variant.id} are available; requested ${quantity}.`,
      details: { available: variant.inventory_quantity },
    };
  return undefined;
}

/**
 * Resolves requested lines to variants, one line per variant (the same variant twice merges, quantities summed, the
 * first line id kept) in first-mention order, and collects every problem: first each item that names no one variant,
 * in request order, then each merged line that cannot be bought.
 */
export function resolveLines<Variant extends PurchasableVariantRow>(
  requested: readonly RequestedItem[],
  candidates: readonly Variant[],
  currencyCode: string,
): { lines: Array<ResolvedLine<Variant>>; problems: LineProblem[] } {
  const problems: LineProblem[] = [];
  const merged = new Map<string, ResolvedLine<Variant>>();
  for (const item of requested) {
    const variant = matchVariant(item.ref, candidates);
    if ('reason' in variant) {
      problems.push(variant);
      continue;
    }
    const existing = merged.get(variant.id);
    if (existing) existing.quantity += item.quantity;
    else merged.set(variant.id, { variant, quantity: item.quantity, lineId: item.lineId, first: item });
  }
  for (const { variant, quantity, first } of merged.values()) {
    const problem = availabilityProblem(variant, quantity, first, currencyCode);
    if (problem) problems.push(problem);
  }
  return { lines: [...merged.values()], problems };
}

/** A problem as REST answers it: a 400 with the problem's reason as its code, the remedy added to the message. */
export function lineError(problem: LineProblem): BadRequest {
  const message = problem.remedy ? `${problem.message.slice(0, -1)}; ${problem.remedy}.` : problem.message;
  return new BadRequest(problem.reason, message, {
    param: problem.param,
    details: problem.details,
    ...(problem.reason === 'unknown_item' ? { next: { to: 'list_products' as const } } : {}),
  });
}
