// The catalogue-to-feed mapping (src/domain/acp-feed.ts): availability at each stock boundary, markup taken out of the
// plain description, and variants without a price in the region left out.
import { describe, expect, it } from 'vitest';
import { availability, feedProduct, isCountryCode, LIMITED_STOCK_AT, plainText } from '../../src/domain/acp-feed.js';
import type { ProductRow, VariantRow } from '../../src/domain/catalog.js';

const product: ProductRow = {
  id: 'prod_1',
  title: 'Scraper',
  handle: 'scraper',
  description: '<p>Steel &amp; care</p><ul><li>One</li><li>Two</li></ul>',
  material: null,
  thumbnail: 'https://cdn.example/s.jpg',
  collection_id: null,
};

function variant(overrides: Partial<VariantRow>): VariantRow {
  return {
    id: 'variant_1',
    product_id: 'prod_1',
    title: 'One',
    sku: null,
    manage_inventory: true,
    allow_backorder: false,
    inventory_quantity: 100,
    price_amount: 1299,
    ...overrides,
  };
}

describe('ACP feed availability', () => {
  it.each([
    [
      { manage_inventory: false, inventory_quantity: 0 },
      { available: true, status: 'in_stock' },
    ],
    [{ inventory_quantity: LIMITED_STOCK_AT + 1 }, { available: true, status: 'in_stock' }],
    [{ inventory_quantity: LIMITED_STOCK_AT }, { available: true, status: 'limited_stock' }],
    [{ inventory_quantity: 1 }, { available: true, status: 'limited_stock' }],
    [
      { inventory_quantity: 0, allow_backorder: true },
      { available: true, status: 'backorder' },
    ],
    [{ inventory_quantity: 0 }, { available: false, status: 'out_of_stock' }],
    [{ inventory_quantity: -2 }, { available: false, status: 'out_of_stock' }],
  ])('%o is %o', (overrides, expected) => {
    expect(availability(variant(overrides))).toEqual(expected);
  });
});

describe('ACP feed products', () => {
  it('takes the markup out of the plain description and decodes its entities', () => {
    expect(plainText(product.description!)).toBe('Steel & care One Two');
  });

  it('prices in the region’s upper-case currency and leaves out variants with no price there', () => {
    const mapped = feedProduct(product, [variant({}), variant({ id: 'variant_2', price_amount: null })], {
      currency_code: 'eur',
    });
    expect(mapped?.variants).toEqual([
      {
        id: 'variant_1',
        title: 'One',
        price: { amount: 1299, currency: 'EUR' },
        availability: { available: true, status: 'in_stock' },
      },
    ]);
    expect(mapped?.media).toEqual([{ type: 'image', url: product.thumbnail, alt_text: 'Scraper' }]);
  });

  it('leaves out a product none of whose variants is priced in the region, and omits an empty description', () => {
    expect(feedProduct(product, [variant({ price_amount: null })], { currency_code: 'usd' })).toBeUndefined();
    expect(
      feedProduct({ ...product, description: null, thumbnail: null }, [variant({})], { currency_code: 'usd' }),
    ).toEqual({
      id: 'prod_1',
      title: 'Scraper',
      variants: [expect.objectContaining({ id: 'variant_1' })],
    });
  });
});

describe('isCountryCode (GET /acp/feed/products and npm run feed:export)', () => {
  it('takes a two-letter code in any case and nothing else', () => {
    expect(['DE', 'de', 'Ca'].map(isCountryCode)).toEqual([true, true, true]);
    expect(['', 'D', 'DEU', 'D3', 'É'.padEnd(2, 'E'), ' DE'].map(isCountryCode)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});
