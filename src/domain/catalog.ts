// Shapes catalogue rows into the API's Product representation, honouring the `fields` selection.
import type { components } from '../../codegen/types.js';
import type { FieldSelection } from './fields.js';
import { toMajorUnits } from './money.js';

export type Product = components['schemas']['Product'];
export type Variant = components['schemas']['Variant'];
export type CalculatedPrice = components['schemas']['CalculatedPrice'];

/** Catalogue records as the repositories load them (src/db/repositories/catalog.ts). */
export interface RegionRow {
  id: string;
  name: string;
  currency_code: string;
  is_default: boolean;
  tax_rate_bps: number;
  shipping_amount: number;
  free_shipping_threshold: number | null;
}

export interface ProductRow {
  id: string;
  title: string;
  handle: string;
  description: string | null;
  material: string | null;
  thumbnail: string | null;
  collection_id: string | null;
}

export interface VariantRow {
  id: string;
  product_id: string;
  title: string;
  sku: string | null;
  manage_inventory: boolean;
  allow_backorder: boolean;
  inventory_quantity: number;
  /** Minor units in the requested region; null when the variant has no price there. */
  price_amount: number | null;
}

export function calculatedPrice(amount: number, region: Pick<RegionRow, 'currency_code'>): CalculatedPrice {
  return {
    calculated_amount: toMajorUnits(amount, region.currency_code),
    currency_code: region.currency_code,
    is_calculated_price_tax_inclusive: false,
  };
}

function shapeVariant(row: VariantRow, fields: Set<string>, region: RegionRow): Variant {
  const variant: Variant = { id: row.id };
  if (fields.has('title')) variant.title = row.title;
  if (fields.has('sku')) variant.sku = row.sku;
  if (fields.has('manage_inventory')) variant.manage_inventory = row.manage_inventory;
  if (fields.has('allow_backorder')) variant.allow_backorder = row.allow_backorder;
  if (fields.has('inventory_quantity'))
    variant.inventory_quantity = row.manage_inventory ? row.inventory_quantity : null;
  if (fields.has('calculated_price') && row.price_amount !== null)
    variant.calculated_price = calculatedPrice(row.price_amount, region);
  return variant;
}

export function shapeProduct(
  row: ProductRow,
  variants: VariantRow[],
  selection: FieldSelection,
  region: RegionRow,
): Product {
  const fields = selection.product;
  const product: Product = { id: row.id };
  if (fields.has('title')) product.title = row.title;
  if (fields.has('handle')) product.handle = row.handle;
  if (fields.has('description')) product.description = row.description;
  if (fields.has('material')) product.material = row.material;
  if (fields.has('thumbnail')) product.thumbnail = row.thumbnail;
  const variantFields = selection.variants;
  if (variantFields) product.variants = variants.map((variant) => shapeVariant(variant, variantFields, region));
  return product;
}
