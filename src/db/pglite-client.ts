// knex-pglite's client with named statements prepared, as node-postgres prepares them on PostgreSQL: PGlite's own
// query() sends every statement unnamed, so it is parsed and planned on every call (the shared create read took 1.4 ms
// to plan against 0.4 ms to run), and SQL `PREPARE`/`EXECUTE` cannot help (an `EXECUTE` takes no bind parameters).
import { messages, parse, type PGlite, protocol, type QueryOptions, type Results } from '@electric-sql/pglite';
import type { Knex } from 'knex';
import ClientPgLite from 'knex-pglite';
import { storeOfClient, type PreparedStatement } from './store.js';

/** A statement Knex hands its client: `options` are the query's, a statement's `name` among them (asPrepared). */
interface KnexQuery {
  sql: string;
  bindings?: unknown[];
  options?: QueryOptions & { name?: string };
  response?: Results;
}

const KnexPgliteClient = ClientPgLite as unknown as new (config: Knex.Config) => {
  _query(connection: PGlite, query: KnexQuery): Promise<KnexQuery>;
};

/**
 * A statement carrying a name is parsed under that name once per PGlite instance (Parse, Describe statement, Sync),
 * then every call binds the named statement (Bind, Describe portal, Execute, Sync): one protocol exchange, no parsing,
 * and Postgres's plan cache decides when to keep a generic plan. The rest is PGlite's own query(): its locks, its
 * parameter serialisers by the described types, its result parsing, its errors (the `DatabaseError` with the query,
 * its parameters and options) and its file-system sync. Statements without a name go through query() unchanged.
 */
export class PglitePreparedClient extends KnexPgliteClient {
  override async _query(connection: PGlite, query: KnexQuery): Promise<KnexQuery> {
    const name = query.options?.name;
    if (!name || !query.sql) return super._query(connection, query);
    const prepared = storeOfClient(this as unknown as Knex.Client).preparedIn(connection);
    query.response = await runNamed(connection, prepared, name, query.sql, query.bindings ?? [], query.options);
    return query;
  }
}

async function runNamed(
  pglite: PGlite,
  prepared: Map<string, PreparedStatement>,
  name: string,
  text: string,
  params: unknown[],
  options: QueryOptions | undefined,
): Promise<Results> {
  await pglite._checkReady();
  return pglite._runExclusiveTransaction(() =>
    pglite._runExclusiveQuery(async () => {
      let replies: messages.BackendMessage[];
      try {
        const statement = await preparedStatement(pglite, prepared, name, text, options);
        const values = params.map((param, index) => {
          if (param === null || param === undefined) return null;
          const type = statement.parameterTypes[index]!;
          const serialize = options?.serializers?.[type] ?? pglite.serializers[type];
          return serialize ? serialize(param) : String(param);
        });
        // Sync last, so that a statement that fails still leaves the session ready for the next one (inside a
        // transaction, the transaction stays open and failed, as with an unnamed statement).
        replies = await pglite.execProtocolStream(
          Buffer.concat([
            protocol.serialize.bind({ statement: name, values }),
            protocol.serialize.describe({ type: 'P' }),
            protocol.serialize.execute({}),
            protocol.serialize.sync(),
          ]),
          { syncToFs: false },
        );
      } catch (error) {
        if (error instanceof messages.DatabaseError)
          Object.assign(error, { query: text, params, queryOptions: options });
        throw error;
      }
      await pglite.syncToFs();
      return parse.parseResults(replies, pglite.parsers, options)[0]!;
    }),
  );
}

/**
 * The statement `name` in the session (`statements`: those it holds, kept by the database's Store), parsed now if it is
 * not yet; a name never stands for two texts.
 */
async function preparedStatement(
  pglite: PGlite,
  statements: Map<string, PreparedStatement>,
  name: string,
  text: string,
  options: QueryOptions | undefined,
): Promise<PreparedStatement> {
  const known = statements.get(name);
  if (known) {
    if (known.text !== text) throw new Error(`Prepared statement "${name}" was used for a different statement`);
    return known;
  }
  // A Parse that fails leaves no statement behind: the name stays free and the error is the query's.
  const replies = await pglite.execProtocolStream(
    Buffer.concat([
      protocol.serialize.parse({ name, text, types: options?.paramTypes }),
      protocol.serialize.describe({ type: 'S', name }),
      protocol.serialize.sync(),
    ]),
    { syncToFs: false },
  );
  const statement = { text, parameterTypes: parse.parseDescribeStatementResults(replies) };
  statements.set(name, statement);
  return statement;
}
