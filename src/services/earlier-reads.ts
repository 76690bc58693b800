// A create like an earlier one is priced from the earlier one's read and stored only if the catalogue has not changed
// since: the statement that stores it compares the version the read saw (catalog_version, migration 007) with the
// current one, so nothing committed between that read and the store is missed, and a stale read stores nothing (the
// create then reads afresh). That saves the read's round trip: at 32 connections the read was half of a create's CPU
// in the service and in PostgreSQL. Nothing here needs sharing between instances: each checks its reads against the
// one database.
import { LRUCache } from 'lru-cache';
import type { Db } from '../db/knex.js';

/** How many sets of references each database's reads are kept for (the least recently used go first). */
const EARLIER_READS = 1_000;
/**
 * Clients name what is kept (the references of a create, whose key is their JSON), so each cache is bounded in bytes as
 * well. A read holds at most a row or two per reference its key names (a variant, a price, a promotion: each under 1 kB),
 * and a reference takes at least ten characters of the key: 64 bytes per character of key, plus the entry's own, is
 * more than a read holds, so the bound holds whatever the keys.
 */
const EARLIER_READS_MAX_BYTES = 16 * 1024 * 1024;
const estimatedBytes = (_reads: object, key: string) => 64 * key.length + 1024;

/** Reads by what they read (a create's read as a string), per database: one cache per kind of create. */
export function earlierReadsCache<Reads extends object>(): (db: Db) => LRUCache<string, Reads> {
  const byDatabase = new WeakMap<Db, LRUCache<string, Reads>>();
  return (db) => {
    let reads = byDatabase.get(db);
    if (!reads) {
      reads = new LRUCache<string, Reads>({
        max: EARLIER_READS,
        maxSize: EARLIER_READS_MAX_BYTES,
        sizeCalculation: estimatedBytes,
      });
      byDatabase.set(db, reads);
    }
    return reads;
  };
}
