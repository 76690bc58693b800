// RFC 8785 (JCS) canonical JSON, as the protocols' idempotency fingerprint and the MCP tools' cache keys use it.
import canonicalizeModule from 'canonicalize';

// The package is CommonJS (`module.exports = serialize`) with ES-module typings: the default import is the function.
export const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

/** JSON with object keys sorted by code unit, so bodies equal as parsed JSON read the same whatever their key order. */
export function sortedKeysJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedKeysJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${sortedKeysJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
