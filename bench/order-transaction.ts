// The webhook-to-order path's database ceiling (issue #15): the statements the service sends for one order (one
// statement on its own, or a transaction from BEGIN to COMMIT, whichever the service does), captured from the service
// itself (an instance in this process, on the bench's database, taking one paid delivery) and replayed by pgbench once
// per order, with fresh ids in every replay (a parameter of their own, or a string inside a JSON parameter), so that
// the ceiling follows the service's statements as they change instead of a copy of them; a replay that made no order
// stops the bench.
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { startService } from '../src/service.js';
import pg from 'pg';
import { runScript, type PgbenchFigures } from './pgbench.js';

interface Statement {
  /** PostgreSQL's text, `$n` for the parameters. */
  sql: string;
  bindings: readonly unknown[];
}

export interface OrderTransaction {
  /** Every statement the delivery sent, in order, as the service sent them (a transaction's BEGIN and COMMIT too). */
  statements: Statement[];
  /**
   * The values this order made for itself (event, session, order, lines, receipt, payment and processor checkout ids):
   * fresh in each replay.
   */
  fresh: string[];
  /** The session the order completed: each replay completes a copy of it. */
  sessionId: string;
  /** The processor checkout it was paid through (whose quote the transaction reads): each replay reads a copy. */
  checkoutReference: string;
}

export interface PlacedOrder {
  sessionId: string;
  eventId: string;
  checkoutReference: string;
  /** Sends the payment's delivery, which makes the order. */
  deliver: () => Promise<void>;
}

interface QueryEvent {
  sql: string;
  bindings?: readonly unknown[];
}

/**
 * Starts an instance of the service in this process on `env` (database and payment settings), lets `prepare` make a
 * paid session through it over HTTP, and keeps the statements its delivery sends.
 */
export async function captureOrderTransaction(
  env: Record<string, string>,
  prepare: (baseUrl: string) => Promise<PlacedOrder>,
): Promise<OrderTransaction> {
  const log = createLogger('silent');
  const service = await startService(loadConfig({ PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...env }), {
    log,
  });
  const { db } = service.deps;
  const statements: Statement[] = [];
  const keep = ({ sql, bindings = [] }: QueryEvent) => statements.push({ sql, bindings });
  try {
    const { sessionId, eventId, checkoutReference, deliver } = await prepare(service.url);
    db.on('query', keep);
    await deliver();
    db.off('query', keep);
    if (!statements.some(({ sql }) => /\binsert into "?orders"?[\s(]/i.test(sql)))
      throw new Error('the delivery sent no statement inserting an order');
    const order = (await db('orders').where({ session_id: sessionId }).first()) as Record<string, string>;
    const lineIds = (await db('order_line_items').where({ order_id: order.id }).pluck('id')) as string[];
    return {
      statements,
      fresh: [
        eventId,
        sessionId,
        order.id!,
        order.order_number!,
        order.permalink_token!,
        order.payment_reference!,
        checkoutReference,
        ...lineIds,
      ],
      sessionId,
      checkoutReference,
    };
  } finally {
    db.off('query', keep);
    await service.close();
  }
}

/** A PostgreSQL array literal of strings or numbers. */
function arrayLiteral(values: readonly unknown[]): string {
  const element = (value: unknown) =>
    value === null ? 'NULL' : `"${String(value).replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
  return `{${values.map(element).join(',')}}`;
}

/**
 * The pgbench script of one replay and the variables it binds: every parameter becomes a pgbench variable (so that
 * `-M prepared` sends it as a parameter, as the service does), except a fresh value, which becomes itself suffixed
 * with the client and its transaction counter `k` (unique within a run), and NULL, which pgbench cannot bind.
 */
export function replayScript(transaction: OrderTransaction): { script: string; variables: Record<string, string> } {
  const variables: Record<string, string> = {};
  const freshIndex = new Map(transaction.fresh.map((value, index) => [value, index]));
  transaction.fresh.forEach((value, index) => (variables[`f${index}`] = value));
  const freshExpression = (value: string) =>
    `(CAST(:f${freshIndex.get(value)} AS text) || '_' || CAST(:client_id AS text) || '_' || CAST(:k AS text))`;
  const isFresh = (value: unknown): value is string => typeof value === 'string' && freshIndex.has(value);
  const bind = (value: string) => {
    const name = `v${Object.keys(variables).length}`;
    variables[name] = value;
    return `:${name}`;
  };
  // A JSON document holding fresh values (a batch of payments is one): each such value, a whole JSON string, replaced.
  const freshInJson = (text: string): string | undefined => {
    const found = transaction.fresh.filter((value) => text.includes(JSON.stringify(value)));
    if (found.length === 0) return undefined;
    return found.reduce(
      (expression, value) =>
        `replace(${expression}, ${bind(JSON.stringify(value))}, '"' || ${freshExpression(value)} || '"')`,
      `CAST(${bind(text)} AS text)`,
    );
  };
  const parameter = (value: unknown): string => {
    if (value === null || value === undefined) return 'NULL';
    if (isFresh(value)) return freshExpression(value);
    if (typeof value === 'string') {
      const replaced = freshInJson(value);
      if (replaced) return replaced;
    }
    if (Array.isArray(value))
      return value.some(isFresh)
        ? `ARRAY[${value.map((element) => (isFresh(element) ? freshExpression(element) : bind(String(element)))).join(', ')}]`
        : bind(arrayLiteral(value));
    if (value instanceof Date) return bind(value.toISOString());
    if (typeof value === 'object') return bind(JSON.stringify(value));
    return bind(String(value));
  };
  const statements = transaction.statements.map(({ sql, bindings }) => {
    const text = sql.replace(/\$(\d+)/g, (_, position: string) => parameter(bindings[Number(position) - 1]));
    return `${text.replace(/;\s*$/, '')};`;
  });
  return { script: ['\\set k :k + 1', ...statements, ''].join('\n'), variables };
}

/**
 * Copies of the captured session, ready for payment, and of its processor checkout, one for each replay:
 * `<id>_<client>_<k>` for k in (from, to]. The quote's line ids, which become the order's, are copied so too.
 */
async function copySessions(
  databaseUrl: string,
  transaction: OrderTransaction,
  clients: number,
  from: number,
  to: number,
) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(
      `insert into carts
       select (jsonb_populate_record(c, jsonb_build_object(
         'id', c.id || '_' || client || '_' || k, 'status', 'ready_for_payment', 'completed_at', null))).*
       from carts c, generate_series(0, $2::int - 1) client, generate_series($3::int + 1, $4::int) k
       where c.id = $1`,
      [transaction.sessionId, clients, from, to],
    );
    await client.query(
      `insert into processor_checkouts
       select (jsonb_populate_record(pc, jsonb_build_object(
         'session_id', pc.session_id || '_' || client || '_' || k, 'reference', pc.reference || '_' || client || '_' || k,
         'quote', jsonb_set(pc.quote, '{lines}', (
           select jsonb_agg(jsonb_set(line, '{id}', to_jsonb(line->>'id' || '_' || client || '_' || k)) order by at)
           from jsonb_array_elements(pc.quote->'lines') with ordinality as l (line, at)))))).*
       from processor_checkouts pc, generate_series(0, $3::int - 1) client, generate_series($4::int + 1, $5::int) k
       where pc.session_id = $1 and pc.reference = $2`,
      [transaction.sessionId, transaction.checkoutReference, clients, from, to],
    );
  } finally {
    await client.end();
  }
}

/**
 * pgbench replaying the order's transaction `transactionsPerClient` times per client, each replay completing a session
 * of its own. `round` keeps the replays of successive runs apart.
 */
export async function replayOrders(
  databaseUrl: string,
  transaction: OrderTransaction,
  settings: { clients: number; transactionsPerClient: number; round: number },
): Promise<PgbenchFigures> {
  const from = settings.round * settings.transactionsPerClient;
  await copySessions(databaseUrl, transaction, settings.clients, from, from + settings.transactionsPerClient);
  const { script, variables } = replayScript(transaction);
  const figures = await runScript(databaseUrl, script, { ...variables, k: String(from) }, settings);
  // Each replay must have made an order of its own: replays answered as duplicates would measure something cheaper.
  const expected = settings.clients * settings.transactionsPerClient;
  const made = await replayedOrders(databaseUrl, transaction, from, from + settings.transactionsPerClient);
  if (made !== expected) throw new Error(`the ceiling's replays made ${made} orders, not ${expected}`);
  return figures;
}

/** A LIKE pattern for the copies of a captured value made by the replays: `<value>_…`. */
const likePrefix = (value: string) => `${value.replaceAll('_', '\\_')}\\_%`;

/** How many orders the replays numbered (from, to] made. */
async function replayedOrders(databaseUrl: string, transaction: OrderTransaction, from: number, to: number) {
  const [, , orderId] = transaction.fresh;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ made: number }>(
      `select count(*)::int as made from orders
       where id like $1 and split_part(id, '_', -1)::int > $2 and split_part(id, '_', -1)::int <= $3`,
      [likePrefix(orderId!), from, to],
    );
    return rows[0]!.made;
  } finally {
    await client.end();
  }
}

/** Removes what the replays wrote (for a database given in DATABASE_URL; a fresh one is dropped whole). */
export async function removeReplayedOrders(databaseUrl: string, transaction: OrderTransaction): Promise<void> {
  const [eventId, sessionId, orderId] = transaction.fresh;
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('delete from order_line_items where order_id like $1', [likePrefix(orderId!)]);
    await client.query('delete from orders where id like $1', [likePrefix(orderId!)]);
    await client.query('delete from processor_checkouts where session_id like $1', [likePrefix(sessionId!)]);
    await client.query('delete from carts where id like $1', [likePrefix(sessionId!)]);
    await client.query('delete from processor_events where event_id like $1', [likePrefix(eventId!)]);
  } finally {
    await client.end();
  }
}
