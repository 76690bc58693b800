// The one line resolver (src/domain/cart-items.ts): every surface's requested lines, one set of rules and messages.
// REST answers the first problem (lineError), the protocols every one.
import { describe, expect, it } from 'vitest';
import {
  lineError,
  requestedItems,
  resolveLines,
  type PurchasableVariantRow,
  type RequestedItem,
} from '../../src/domain/cart-items.js';

const variant = (id: string, fields: Partial<PurchasableVariantRow> = {}): PurchasableVariantRow => ({
  id,
  sku: `SKU-${id}`,
  title: id,
  product_title: 'Tongue scraper',
  product_handle: 'tongue-scraper',
  manage_inventory: true,
  allow_backorder: false,
  inventory_quantity: 50,
  price_amount: 1200,
  ...fields,
});

const CANDIDATES = [
  variant('variant_a'),
  variant('variant_b', { product_handle: 'two-pack', inventory_quantity: 3 }),
  variant('variant_c', { product_handle: 'two-pack' }),
  variant('variant_unpriced', { product_handle: 'unpriced', price_amount: null }),
  variant('variant_backorder', { product_handle: 'backorder', inventory_quantity: 0, allow_backorder: true }),
];

/** A protocol's line: named by its item id, its problems at its id's and its quantity's paths. */
const protocolLine = (index: number, itemId: string, quantity: number, lineId?: string): RequestedItem => ({
  ref: { kind: 'item_id', value: itemId, param: `$.line_items[${index}].item.id` },
  quantity,
  lineId,
  itemParam: `$.line_items[${index}].item.id`,
  quantityParam: `$.line_items[${index}].quantity`,
});

describe('resolveLines', () => {
  const cases: Array<{
    name: string;
    requested: RequestedItem[];
    lines: Array<{ id: string; quantity: number; lineId?: string }>;
    problems: Array<{ reason: string; param: string; message: string; details?: Record<string, unknown> }>;
  }> = [
    {
      name: 'names by variant id, handle and SKU, one line per variant in first-mention order, quantities summed',
      requested: requestedItems([
        { id: 'variant_a', quantity: 2 },
        { sku: 'SKU-variant_c' },
        { variant_id: 'variant_a', quantity: 3 },
        { handle: 'backorder', quantity: 9 },
      ]),
      lines: [
        { id: 'variant_a', quantity: 5 },
        { id: 'variant_c', quantity: 1 },
        { id: 'variant_backorder', quantity: 9 },
      ],
      problems: [],
    },
    {
      name: 'an item with no identifier, or with several',
      requested: requestedItems([{ quantity: 1 }, { id: 'variant_a', sku: 'SKU-variant_a' }]),
      lines: [],
      problems: [
        {
          reason: 'missing_item_identifier',
          param: 'items[0].id',
          message: 'items[0] needs an identifier: id (a variant id or product handle), variant_id, handle or sku.',
        },
        {
          reason: 'ambiguous_item',
          param: 'items[1]',
          message: 'items[1] has several identifiers (id, sku); send exactly one.',
        },
      ],
    },
    {
      name: 'an unknown variant, SKU or handle, and a handle of several variants',
      requested: requestedItems([
        { variant_id: 'variant_nope' },
        { sku: 'NOPE' },
        { id: 'nope' },
        { handle: 'two-pack' },
      ]),
      lines: [],
      problems: [
        { reason: 'unknown_item', param: 'items[0].variant_id', message: 'No variant "variant_nope" in the catalog.' },
        { reason: 'unknown_item', param: 'items[1].sku', message: 'No SKU "NOPE" in the catalog.' },
        { reason: 'unknown_item', param: 'items[2].id', message: 'No product handle "nope" in the catalog.' },
        {
          reason: 'variant_required',
          param: 'items[3].handle',
          message: 'Product "two-pack" has several variants; send one of their ids: variant_b, variant_c.',
          details: { variant_ids: ['variant_b', 'variant_c'] },
        },
      ],
    },
    {
      name: 'lines that cannot be bought, each at its first mention, after every unknown item',
      requested: requestedItems([
        { id: 'variant_unpriced' },
        { id: 'variant_a', quantity: 60 },
        { id: 'variant_b', quantity: 2 },
        { id: 'variant_a', quantity: 41 },
        { id: 'variant_b', quantity: 2 },
        { id: 'variant_gone' },
      ]),
      lines: [
        { id: 'variant_unpriced', quantity: 1 },
        { id: 'variant_a', quantity: 101 },
        { id: 'variant_b', quantity: 4 },
      ],
      problems: [
        { reason: 'unknown_item', param: 'items[5].id', message: 'No variant "variant_gone" in the catalog.' },
        { reason: 'item_unavailable_in_region', param: 'items[0]', message: 'variant_unpriced is not sold in EUR.' },
        {
          reason: 'quantity_too_large',
          param: 'items[1].quantity',
          message: 'variant_a is requested 101 times in all; the most per line is 100.',
        },
        {
          reason: 'insufficient_stock',
          param: 'items[2].quantity',
          message: 'Only 3 of variant_b are available; requested 4.',
          details: { available: 3 },
        },
      ],
    },
    {
      name: "a protocol's lines: only variant ids name items, the first line id is kept, problems at the id's path",
      requested: [
        protocolLine(0, 'variant_a', 1, 'li_1'),
        protocolLine(1, 'tongue-scraper', 1),
        protocolLine(2, 'variant_a', 2, 'li_2'),
        protocolLine(3, 'variant_unpriced', 1),
      ],
      lines: [
        { id: 'variant_a', quantity: 3, lineId: 'li_1' },
        { id: 'variant_unpriced', quantity: 1 },
      ],
      problems: [
        {
          reason: 'unknown_item',
          param: '$.line_items[1].item.id',
          message: "No purchasable item 'tongue-scraper' in this store; items are named by variant id (variant_…).",
        },
        {
          reason: 'item_unavailable_in_region',
          param: '$.line_items[3].item.id',
          message: 'variant_unpriced is not sold in EUR.',
        },
      ],
    },
  ];

  it.each(cases)('$name', ({ requested, lines, problems }) => {
    const resolved = resolveLines(requested, CANDIDATES, 'eur');
    expect(
      resolved.lines.map((line) => ({
        id: line.variant.id,
        quantity: line.quantity,
        ...(line.lineId ? { lineId: line.lineId } : {}),
      })),
    ).toEqual(lines);
    // A remedy is REST's clause (see lineError below).
    expect(resolved.problems.map(({ remedy: _remedy, ...problem }) => problem)).toEqual(problems);
  });
});

describe('lineError', () => {
  it("is REST's 400: the problem's reason as its code, its remedy added to the message, its param and details", () => {
    const [unpriced, stock] = resolveLines(
      requestedItems([{ id: 'variant_unpriced' }, { id: 'variant_b', quantity: 4 }]),
      CANDIDATES,
      'eur',
    ).problems;
    const unavailable = lineError(unpriced!);
    expect(unavailable).toMatchObject({
      reason: 'item_unavailable_in_region',
      message: 'variant_unpriced is not sold in EUR; choose another region.',
      param: 'items[0]',
      details: {},
    });
    expect(lineError(stock!)).toMatchObject({ reason: 'insufficient_stock', details: { available: 3 } });
  });

  it('points an unknown item to the product list (each surface names it)', () => {
    const [unknown] = resolveLines(requestedItems([{ id: 'variant_nope' }]), CANDIDATES, 'eur').problems;
    expect(lineError(unknown!).next).toEqual({ to: 'list_products' });
  });
});
