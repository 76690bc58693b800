import { randomFillSync } from 'node:crypto';

const ID_BYTES = 12;
/**
 * Random bytes are drawn for this many ids at once (as Node's randomUUID keeps a cache of entropy): one call into
 * OpenSSL per id was 2–3 % of a create's CPU, three ids per create.
 */
const IDS_PER_DRAW = 128;

/**
 * Makes opaque, URL-safe, prefixed ids (`cart_…`, `cali_…`): 96 random bits, so they cannot be guessed or enumerated.
 * The service builds one (src/service.ts, `Deps.ids`) and holds its pool of random bytes; nothing is kept per module.
 */
export class IdSource {
  readonly #pool = Buffer.allocUnsafe(ID_BYTES * IDS_PER_DRAW);
  #offset = this.#pool.length;

  /** A new id: `${prefix}_` and 16 base64url characters. */
  next(prefix: string): string {
    const pool = this.#pool;
    if (this.#offset === pool.length) {
      randomFillSync(pool);
      this.#offset = 0;
    }
    const id = pool.toString('base64url', this.#offset, this.#offset + ID_BYTES);
    this.#offset += ID_BYTES;
    return `${prefix}_${id}`;
  }
}
