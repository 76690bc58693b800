import { describe, expect, it } from 'vitest';
import { parseFieldSelection } from '../../src/domain/fields.js';
import { BadRequest } from '../../src/domain/errors.js';

const sorted = (set: Set<string> | null) => (set ? [...set].sort() : null);

describe('parseFieldSelection (Medusa fields grammar)', () => {
  it('defaults to every product field and the variants without price or stock', () => {
    const selection = parseFieldSelection(undefined);
    expect(sorted(selection.product)).toEqual(['description', 'handle', 'id', 'material', 'thumbnail', 'title']);
    expect(sorted(selection.variants)).toEqual(['allow_backorder', 'id', 'manage_inventory', 'sku', 'title']);
    expect(parseFieldSelection('')).toEqual(selection);
  });

  it('adds with *, + and a leading space (a decoded +)', () => {
    const selection = parseFieldSelection('*variants.calculated_price, variants.inventory_quantity');
    expect(selection.variants!.has('calculated_price')).toBe(true);
    expect(selection.variants!.has('inventory_quantity')).toBe(true);
    expect(selection.product.size).toBe(6);
    expect(parseFieldSelection('+variants.inventory_quantity')).toEqual(
      parseFieldSelection(' variants.inventory_quantity'),
    );
  });

  it('selects only bare names, always keeping id', () => {
    expect(parseFieldSelection('title')).toEqual({ product: new Set(['id', 'title']), variants: null });
    expect(sorted(parseFieldSelection('variants.sku').variants)).toEqual(['id', 'sku']);
    expect(sorted(parseFieldSelection('variants').variants)).toEqual([
      'allow_backorder',
      'id',
      'manage_inventory',
      'sku',
      'title',
    ]);
  });

  it('removes with -', () => {
    const selection = parseFieldSelection('-material,-variants.sku');
    expect(selection.product.has('material')).toBe(false);
    expect(selection.variants!.has('sku')).toBe(false);
    expect(parseFieldSelection('-variants').variants).toBeNull();
  });

  it.each(['nope', 'variants.nope', '*collection', 'variants.calculated_price.amount', '-id', 'variants.*'])(
    'rejects %s with a 400 on fields',
    (raw) => {
      try {
        parseFieldSelection(raw);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(BadRequest);
        expect((error as BadRequest).reason).toBe('invalid_parameter');
        expect((error as BadRequest).param).toBe('fields');
      }
    },
  );
});
