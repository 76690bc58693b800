// The `fields` query grammar of the catalog, after Medusa's: comma-separated tokens, where
//   +name (or " name": a literal + decodes to a space in a query string) and *name add to the defaults,
//   -name removes from them, and a bare name selects only the bare-named fields (plus `id`).
// `*variants.calculated_price` adds prices and `+variants.inventory_quantity` adds stock.
import { BadRequest } from './errors.js';

export const PRODUCT_FIELDS = ['id', 'title', 'handle', 'description', 'material', 'thumbnail'] as const;
export const VARIANT_FIELDS = [
  'id',
  'title',
  'sku',
  'manage_inventory',
  'allow_backorder',
  'inventory_quantity',
  'calculated_price',
] as const;
export type ProductField = (typeof PRODUCT_FIELDS)[number];
export type VariantField = (typeof VARIANT_FIELDS)[number];

const DEFAULT_VARIANT_FIELDS: VariantField[] = ['id', 'title', 'sku', 'manage_inventory', 'allow_backorder'];

export interface FieldSelection {
  product: Set<ProductField>;
  /** null: the product carries no `variants` key. */
  variants: Set<VariantField> | null;
}

type Operator = 'add' | 'remove' | 'select';
type Target =
  { kind: 'product'; field: ProductField } | { kind: 'variants' } | { kind: 'variant'; field: VariantField };
interface Token {
  operator: Operator;
  target: Target;
}

function invalidField(name: string, why: string): BadRequest {
  return new BadRequest('invalid_parameter', `fields: ${why} "${name}".`, {
    param: 'fields',
    resolution: `Select from ${PRODUCT_FIELDS.join(', ')}, variants, and variants.<${VARIANT_FIELDS.join('|')}>.`,
  });
}

function operatorOf(token: string): [Operator, string] {
  const prefix = token[0];
  if (prefix === '+' || prefix === ' ' || prefix === '*') return ['add', token.slice(1)];
  if (prefix === '-') return ['remove', token.slice(1)];
  return ['select', token];
}

function targetOf(name: string): Target {
  if (name === 'variants') return { kind: 'variants' };
  if (name.startsWith('variants.')) {
    const field = name.slice('variants.'.length);
    if ((VARIANT_FIELDS as readonly string[]).includes(field)) return { kind: 'variant', field: field as VariantField };
    throw invalidField(name, 'unknown variant field');
  }
  if ((PRODUCT_FIELDS as readonly string[]).includes(name)) return { kind: 'product', field: name as ProductField };
  throw invalidField(name, 'unknown field or relation');
}

function parseToken(raw: string): Token {
  const [operator, name] = operatorOf(raw.trimEnd());
  const target = targetOf(name.trim());
  if (operator === 'remove' && target.kind === 'product' && target.field === 'id')
    throw invalidField(raw, 'id is always returned and cannot be removed:');
  return { operator, target };
}

function startingSelection(tokens: Token[]): FieldSelection {
  const selects = tokens.filter((token) => token.operator === 'select');
  if (selects.length === 0) return { product: new Set(PRODUCT_FIELDS), variants: new Set(DEFAULT_VARIANT_FIELDS) };
  const selection: FieldSelection = { product: new Set(['id']), variants: null };
  for (const { target } of selects) {
    if (target.kind === 'product') selection.product.add(target.field);
    else if (target.kind === 'variants')
      selection.variants = new Set([...(selection.variants ?? []), ...DEFAULT_VARIANT_FIELDS]);
    else selection.variants = new Set([...(selection.variants ?? ['id' as const]), target.field]);
  }
  return selection;
}

function apply(selection: FieldSelection, { operator, target }: Token): void {
  if (operator === 'add') {
    if (target.kind === 'product') selection.product.add(target.field);
    else if (target.kind === 'variants')
      selection.variants = new Set([...(selection.variants ?? []), ...DEFAULT_VARIANT_FIELDS]);
    else (selection.variants ??= new Set(['id'])).add(target.field);
  } else if (operator === 'remove') {
    if (target.kind === 'product') selection.product.delete(target.field);
    else if (target.kind === 'variants') selection.variants = null;
    else selection.variants?.delete(target.field);
  }
}

/** Parses a `fields` value into the product and variant fields to return; throws a 400 naming an unknown field. */
export function parseFieldSelection(raw: string | undefined): FieldSelection {
  const tokens = (raw ?? '')
    .split(',')
    .filter((token) => token.trim() !== '')
    .map(parseToken);
  const selection = startingSelection(tokens);
  for (const token of tokens) apply(selection, token);
  return selection;
}

/**
 * What a selection selects, as text: equal for every `fields` value that selects the same fields (tokens in another
 * order, repeated or empty), different for any that selects others. Products are shaped in a fixed field order
 * (src/domain/catalog.ts), so equal selections give equal bodies.
 */
export function fieldSelectionKey(selection: FieldSelection): string {
  const product = PRODUCT_FIELDS.filter((field) => selection.product.has(field)).join(',');
  const { variants } = selection;
  return variants ? `${product};${VARIANT_FIELDS.filter((field) => variants.has(field)).join(',')}` : product;
}
