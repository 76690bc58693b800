// One span per SQL statement, child of the span that runs it (a request's, or a batched statement's): Knex's client
// class for the database, extended so that its `query` (what the query runner, runPrepared and transactions' BEGIN
// and COMMIT all call) runs inside a client span. A class per database, so nothing is patched globally; a transaction's
// client is made from its database client's class, so its statements are traced too. Only statements that run inside
// a span are traced: background rounds (retention, the outbox) are not, unless they start a span of their own.
import type { Knex } from 'knex';
import type { Tracing } from '../tracing.js';

type ClientClass = typeof Knex.Client;

/** The statement's text and its prepared name, whatever shape Knex hands the client. */
function statementOf(query: unknown): { sql: string; name: string | undefined } {
  if (typeof query === 'string') return { sql: query, name: undefined };
  const { sql, options } = (query ?? {}) as { sql?: string; options?: { name?: string } };
  return { sql: sql ?? '', name: options?.name };
}

/** The statement's first keyword (SELECT, INSERT, WITH, BEGIN…), never its text. */
function operationOf(sql: string): string {
  const match = /^\s*([A-Za-z]+)/.exec(sql);
  return match ? match[1]!.toUpperCase() : 'postgresql';
}

/** `Base`, its statements traced by `tracing`. */
export function tracedClient(Base: ClientClass, tracing: Tracing): ClientClass {
  class TracedClient extends Base {
    override query(connection: unknown, query: unknown): Promise<unknown> {
      const { sql, name } = statementOf(query);
      const operation = operationOf(sql);
      // A named statement is named by its name (a constant of the code), any other by its first keyword.
      const span = tracing.startSpan(name ?? operation, {
        kind: 'client',
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': operation,
          'db.query.text': sql,
          ...(name ? { 'db.query.summary': name } : {}),
        },
      });
      if (!span) return super.query(connection, query) as Promise<unknown>;
      return tracing
        .within(span, () => super.query(connection, query) as Promise<unknown>)
        .then(
          (result) => {
            span.end();
            return result;
          },
          (error: unknown) => {
            span.end(error);
            throw error;
          },
        );
    }
  }
  return TracedClient as unknown as ClientClass;
}
