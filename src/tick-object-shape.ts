// Keeps the shape of Node's `process.nextTick` records alive for the life of the process.
//
// `process.nextTick` builds each record as `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback, args }`.
// V8 caches the map such a literal starts from only weakly, and the feedback of each of its computed-key definitions
// may hold one map; a second map turns it megamorphic for good. A full garbage collection at a moment when no record is
// alive (start-up runs many) frees the maps, the next record gets new ones, and from then on every record defines its
// four properties in V8's runtime instead of optimized code: about 18 runtime calls and 22,000 instructions of a cached
// read's 158,000 (callgrind, Node 20 and 24; bare Koa pays the same once one full GC has run at such a moment). One
// record held from the first moment keeps its maps, and so the feedback, valid. docs/performance/README.md has the figures.
import { createHook } from 'node:async_hooks';

/** One `nextTick` record, caught as it is made (its async resource), to be held for as long as the process runs. */
export function holdTickObjectShape(): object | undefined {
  let held: object | undefined;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && held === undefined) held = resource as object;
    },
  }).enable();
  try {
    process.nextTick(() => undefined);
  } finally {
    hook.disable();
  }
  return held;
}
