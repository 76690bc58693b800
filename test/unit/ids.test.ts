import { describe, expect, it } from 'vitest';
import { newId } from '../../src/domain/ids.js';

describe('newId', () => {
  it('gives prefixed, URL-safe ids of 96 random bits, each once, across many draws of random bytes', () => {
    const ids = Array.from({ length: 1_000 }, () => newId('cart'));
    for (const id of ids) expect(id).toMatch(/^cart_[A-Za-z0-9_-]{16}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
