// The catalogue as an ACP product feed (ACP 2026-04-17, schema.feed.json): one feed Product per catalogue product, its
// variants priced in the target country's region in integer minor units. A variant with no price there cannot be
// bought there, so it is left out, and a product left with no variant is left out with it.
import type { ProductRow, RegionRow, VariantRow } from './catalog.js';

/** Whether `value` can name a target country: an ISO 3166-1 alpha-2 code, in any case (the feed's `target_country`). */
export function isCountryCode(value: string): boolean {
  return /^[A-Za-z]{2}$/.test(value);
}

/** At or below this many units in stock a managed variant is `limited_stock`. */
export const LIMITED_STOCK_AT = 10;

export interface FeedPrice {
  amount: number;
  currency: string;
}

export interface FeedAvailability {
  available: boolean;
  status: 'in_stock' | 'limited_stock' | 'backorder' | 'out_of_stock';
}

export interface FeedVariant {
  id: string;
  title: string;
  price: FeedPrice;
  availability: FeedAvailability;
}

export interface FeedProduct {
  id: string;
  title: string;
  description?: { plain: string; html: string };
  media?: Array<{ type: 'image'; url: string; alt_text: string }>;
  variants: FeedVariant[];
}

/** What a shopper can do about a variant's stock. */
export function availability(
  variant: Pick<VariantRow, 'manage_inventory' | 'allow_backorder' | 'inventory_quantity'>,
): FeedAvailability {
  if (!variant.manage_inventory) return { available: true, status: 'in_stock' };
  if (variant.inventory_quantity > LIMITED_STOCK_AT) return { available: true, status: 'in_stock' };
  if (variant.inventory_quantity > 0) return { available: true, status: 'limited_stock' };
  return variant.allow_backorder
    ? { available: true, status: 'backorder' }
    : { available: false, status: 'out_of_stock' };
}

/** The catalogue's HTML description with its markup taken out, for clients that do not render HTML. */
export function plainText(html: string): string {
  return html
    .replace(/<\/(p|li|ul|ol|h[1-6])>/gi, ' ')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

function description(html: string | null): { description: { plain: string; html: string } } | Record<string, never> {
  if (html === null || html.trim() === '') return {};
  const plain = plainText(html);
  return plain ? { description: { plain, html } } : {};
}

function media(product: ProductRow): { media: FeedProduct['media'] } | Record<string, never> {
  return product.thumbnail ? { media: [{ type: 'image', url: product.thumbnail, alt_text: product.title }] } : {};
}

/** One catalogue product as a feed Product in `region`'s currency, or undefined when nothing of it is priced there. */
export function feedProduct(
  product: ProductRow,
  variants: VariantRow[],
  region: Pick<RegionRow, 'currency_code'>,
): FeedProduct | undefined {
  const currency = region.currency_code.toUpperCase();
  const priced = variants.flatMap((variant): FeedVariant[] =>
    variant.price_amount === null
      ? []
      : [
          {
            id: variant.id,
            title: variant.title,
            price: { amount: variant.price_amount, currency },
            availability: availability(variant),
          },
        ],
  );
  if (!priced.length) return undefined;
  return {
    id: product.id,
    title: product.title,
    ...description(product.description),
    ...media(product),
    variants: priced,
  };
}
