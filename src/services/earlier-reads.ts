// A create like an earlier one is priced from the earlier one's read and stored only if the catalogue has not changed
// since: the statement that stores it compares the version the read saw (catalog_version, migration 007) with the
// current one, so nothing committed between that read and the store is missed, and a stale read stores nothing (the
// create then reads afresh). That saves the read's round trip: at 32 connections the read was half of a create's CPU
// in the service and in PostgreSQL. Nothing here needs sharing between instances: each checks its reads against the
// one database. The service owns one EarlierReads (src/service.ts, Deps.earlierReads), for its one database.
import { LRUCache } from 'lru-cache';
import type { EarlierReads } from '../ports.js';

/** How many reads each cache keeps (the least recently used go first). */
const EARLIER_READS = 1_000;
/**
 * Clients name what is kept (the references of a create, whose key is their JSON), so each cache is bounded in bytes as
 * well. A read holds at most a row or two per reference its key names (a variant, a price, a promotion: each under 1 kB),
 * and a reference takes at least ten characters of the key: 64 bytes per character of key, plus the entry's own, is
 * more than a read holds, so the bound holds whatever the keys.
 */
const EARLIER_READS_MAX_BYTES = 16 * 1024 * 1024;
const estimatedBytes = (_reads: object, key: string) => 64 * key.length + 1024;

/** Reads by what they read (as a string), bounded in entries and in bytes. */
export function earlierReadsCache<Reads extends object>(): LRUCache<string, Reads> {
  return new LRUCache<string, Reads>({
    max: EARLIER_READS,
    maxSize: EARLIER_READS_MAX_BYTES,
    sizeCalculation: estimatedBytes,
  });
}

export function createEarlierReads(): EarlierReads {
  return { creates: earlierReadsCache(), grants: earlierReadsCache() };
}
