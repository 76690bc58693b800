import { randomBytes } from 'node:crypto';

/** Opaque, URL-safe, prefixed ids (`cart_…`, `cali_…`): 96 random bits, so they cannot be guessed or enumerated. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(12).toString('base64url')}`;
}
