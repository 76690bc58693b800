import { describe, expect, it } from 'vitest';
import { IdSource } from '../../src/domain/ids.js';

describe('IdSource', () => {
  it('gives prefixed, URL-safe ids of 96 random bits, each once, across many draws of random bytes', () => {
    const ids = new IdSource();
    const made = Array.from({ length: 1_000 }, () => ids.next('cart'));
    for (const id of made) expect(id).toMatch(/^cart_[A-Za-z0-9_-]{16}$/);
    expect(new Set(made).size).toBe(made.length);
  });

  it('keeps each source apart: two sources never hand out the same id', () => {
    const [a, b] = [new IdSource(), new IdSource()];
    const made = Array.from({ length: 300 }, () => [a.next('x'), b.next('x')]).flat();
    expect(new Set(made).size).toBe(made.length);
  });
});
