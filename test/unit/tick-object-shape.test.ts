// What start-up holds (src/tick-object-shape.ts) is a `nextTick` record, as Node makes them: the test fails when a
// Node release names or builds its records otherwise. What holding it is worth is measured by the benchmark, not here
// (docs/performance/README.md).
import { describe, expect, it } from 'vitest';
import { holdTickObjectShape } from '../../src/tick-object-shape.js';

describe('the nextTick record held from start', () => {
  it('is a nextTick record', () => {
    const held = holdTickObjectShape() as { callback?: unknown; args?: unknown } | undefined;
    expect(held).toBeDefined();
    expect(typeof held!.callback).toBe('function');
    const symbols = Object.getOwnPropertySymbols(held).map((symbol) => symbol.description);
    expect(symbols).toEqual(expect.arrayContaining(['async_id_symbol', 'trigger_async_id_symbol']));
  });
});
