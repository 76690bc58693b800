import { describe, expect, it } from 'vitest';
import { isStorableText, unstorableTextAt } from '../../src/domain/text.js';

describe('text PostgreSQL can store', () => {
  it('refuses U+0000 and unpaired surrogates, and takes paired ones', () => {
    expect(isStorableText('tongue scraper 😀')).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\ud800')).toBe(false);
    expect(isStorableText('x\udc00')).toBe(false);
  });

  it('gives the path of the first string or key that cannot be stored, through objects and arrays', () => {
    const body = {
      line_items: [{ item: { id: 'variant_a' }, quantity: 1 }, { item: { id: 'bad\u0000' } }],
      buyer: { 'name\ud800': 'Ada' },
    };
    expect(unstorableTextAt(body)).toEqual(['line_items', 1, 'item', 'id']);
    expect(unstorableTextAt({ ...body, line_items: [] })).toEqual(['buyer', 'name\ud800']);
    expect(unstorableTextAt({ buyer: { name: 'Ada' }, tags: ['a', 'b\ud800'] })).toEqual(['tags', 1]);
    expect(unstorableTextAt('\u0000')).toEqual([]);
  });

  it('finds nothing in storable values, whatever they hold', () => {
    expect(unstorableTextAt({ a: [1, true, null, { b: 'c 😀' }], d: 2.5 })).toBeUndefined();
    expect(unstorableTextAt([])).toBeUndefined();
    expect(unstorableTextAt(null)).toBeUndefined();
  });

  it('leaves the path of one value out of its siblings', () => {
    // A search that kept the keys of the values it passed would report them too.
    expect(unstorableTextAt({ a: { b: 'ok' }, c: [{ d: 'ok' }, { e: '\u0000' }] })).toEqual(['c', 1, 'e']);
  });
});
