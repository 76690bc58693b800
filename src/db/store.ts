// What the process keeps for one database beside its rows: the batcher of each batched statement (src/db/batching.ts)
// and, on PGlite, the statements prepared in its session. One object owns them, with the database's lifetime:
// src/service.ts creates it, createDatabase (src/db/knex.ts) hands it to the Knex instance it opens, and the service
// closes it after the database. Repositories reach it through the Db they are given (storeOf), transactions included,
// so no module keeps state of its own. When metrics are kept, the store also carries where the database layer records
// its statements and batches (src/metrics.ts).
import type { PGlite } from '@electric-sql/pglite';
import type { Knex } from 'knex';
import type { Metrics } from '../metrics.js';
import type { Tracing } from '../tracing.js';

/** A statement parsed under its name in one PGlite's session: its text, and the types Postgres gave its parameters. */
export interface PreparedStatement {
  text: string;
  parameterTypes: number[];
}

export class Store {
  /** One batcher per batched statement kind, built on its first use. */
  readonly #batchers = new Map<object, unknown>();
  /** Per PGlite session: the statements it holds under their names. */
  readonly #prepared = new Map<PGlite, Map<string, PreparedStatement>>();
  #closed = false;

  /**
   * `metrics`: where statements and batches are recorded, when metrics are kept (METRICS_PORT); `tracing`: the
   * tracer each statement is a span of (src/db/knex.ts), when tracing is on.
   */
  constructor(
    readonly metrics?: Metrics,
    readonly tracing?: Tracing,
  ) {}

  /** The batcher of statement `kind`, built by `build` the first time it is asked for. */
  batcher<Batcher>(kind: object, build: () => Batcher): Batcher {
    this.#open();
    let batcher = this.#batchers.get(kind) as Batcher | undefined;
    if (batcher === undefined) this.#batchers.set(kind, (batcher = build()));
    return batcher;
  }

  /** The statements prepared in this PGlite's session (a session forgets them only when it ends). */
  preparedIn(pglite: PGlite): Map<string, PreparedStatement> {
    this.#open();
    let statements = this.#prepared.get(pglite);
    if (!statements) this.#prepared.set(pglite, (statements = new Map()));
    return statements;
  }

  /** Forgets everything; called once the database is destroyed, after which the store takes no more work. */
  close(): void {
    this.#closed = true;
    this.#batchers.clear();
    this.#prepared.clear();
  }

  #open(): void {
    if (this.#closed) throw new Error('The database store is closed: the service has stopped');
  }
}

/** Where createDatabase puts the store: Knex's own place for an application's parameters, shared by transactions. */
export interface StoreParams {
  store: Store;
}

/** The store of the database `db` (or a transaction on it) was opened with. */
export function storeOf(db: Knex | Knex.Transaction): Store {
  return storeOfClient(db.client as Knex.Client);
}

/** The same, from the Knex client (a transaction's client shares its database's configuration). */
export function storeOfClient(client: Knex.Client): Store {
  const store = (client.config as { userParams?: Partial<StoreParams> }).userParams?.store;
  if (!store) throw new Error('This database was not opened by createDatabase, so it has no store');
  return store;
}
