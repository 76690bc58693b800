// Catalogue query results, kept 60 s per database (the freshness the edge is already allowed), so the REST catalogue,
// the agent API and the MCP tools answer repeated questions without a round trip. Failures are never kept.
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/knex.js';

const TTL_MS = 60_000;
const MAX_ENTRIES = 2_000;

type Load = () => Promise<unknown>;
const caches = new WeakMap<Db, LRUCache<string, { value: unknown }, Load>>();

function cacheOf(db: Db): LRUCache<string, { value: unknown }, Load> {
  let cache = caches.get(db);
  if (!cache) {
    // Values are boxed so that a legitimately empty answer (an unknown region: undefined) is not confused with a miss.
    cache = new LRUCache<string, { value: unknown }, Load>({
      max: MAX_ENTRIES,
      ttl: TTL_MS,
      fetchMethod: async (_key, _stale, { context: load }) => ({ value: await load() }),
    });
    caches.set(db, cache);
  }
  return cache;
}

/** The answer of `load` for `key`, from the last 60 s when there is one. */
export async function cachedQuery<T>(db: Db, key: string, load: () => Promise<T>): Promise<T> {
  // Inside a transaction the answer must be the transaction's own view, and the transaction object lives for one use.
  if ((db as { isTransaction?: boolean }).isTransaction) return load();
  const entry = await cacheOf(db).fetch(key, { context: load });
  return entry!.value as T;
}
