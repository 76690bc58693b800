// The operator's command line (`npm run admin -- …`), as a function of its arguments: what the entry point
// (src/admin/cli.ts) runs, and what tests run against a service's own database. `clients create` talks to the database
// directly through the OAuth service (an admin client cannot be had any other way); the secret is printed once.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createStorefrontClient, type components } from '../../sdk/index.js';
import type { Deps } from '../deps.js';
import { DomainError } from '../domain/errors.js';
import { createOperatorClient } from '../services/oauth.js';

export const USAGE = `usage: npm run admin -- clients create --name NAME --scope "SCOPE ..." [--json]
       npm run admin -- orders list [--status S] [--fulfilment-status F] [--limit N] [--cursor C] [--json]
       npm run admin -- orders show|deliver|cancel ORDER_ID [--json]
       npm run admin -- orders ship ORDER_ID --carrier C --tracking-number T [--tracking-url U] [--line LINE:QTY ...]
       npm run admin -- orders refund ORDER_ID [--amount MINOR_UNITS] [--restock LINE:QTY ...] [--reason R]

The orders commands call the admin API through the SDK generated from the contract (sdk/), at ADMIN_API_URL (default
AGENT_BASE_URL, then BASE_URL), as the client ADMIN_CLIENT_ID / ADMIN_CLIENT_SECRET (scope admin:orders); each change
is sent under a new Idempotency-Key (--idempotency-key K to retry one).

Creates an OAuth client_credentials client for the store's operator or its tools. Scopes: admin:orders,
admin:catalog, admin:promotions (and the agents' catalog:read, cart:write, orders:read). The client secret is shown
once and stored only as a hash. --json prints {"client_id", "client_secret", "scope"}. Docs: docs/admin.md.`;

export interface CommandIo {
  out(text: string): void;
  err(text: string): void;
}

/** Where the orders commands find the admin API, and as whom. */
export interface ApiAccess {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  fetch?: (request: Request) => Promise<Response>;
}

type AdminOrder = components['schemas']['AdminOrder'];
type Summary = components['schemas']['AdminOrderSummary'];

function lineQuantities(values: string[] | undefined): Array<{ line_id: string; quantity: number }> | undefined {
  if (!values?.length) return undefined;
  return values.map((value) => {
    const at = value.lastIndexOf(':');
    return { line_id: value.slice(0, at), quantity: Number(value.slice(at + 1)) };
  });
}

function orderTable(order: AdminOrder): string {
  return [
    `${order.order_number}  ${order.id}  ${order.status} / ${order.fulfilment_status}  ${order.totals.total} ${order.currency}`,
    ...order.line_items.map(
      (line) =>
        `  ${line.id}  ${line.quantity} x ${line.title}  shipped ${line.quantity_shipped}  restocked ${line.quantity_restocked}`,
    ),
    ...order.shipments.map(
      (shipment) =>
        `  shipment ${shipment.carrier} ${shipment.tracking_number}${shipment.delivered_at ? ' (delivered)' : ''}`,
    ),
    ...order.refunds.map(
      (refund) => `  refund ${refund.amount} ${refund.currency}${refund.restocked ? ' (restocked)' : ''}`,
    ),
  ].join('\n');
}

function listTable(orders: Summary[]): string {
  return orders
    .map((order) =>
      [order.order_number, order.id, order.status, order.fulfilment_status, `${order.total} ${order.currency}`].join(
        '  ',
      ),
    )
    .join('\n');
}

async function ordersCommand(access: ApiAccess, positionals: string[], values: Record<string, any>, io: CommandIo) {
  const fetcher = access.fetch ?? ((request: Request) => fetch(request));
  const tokenAnswer = await fetcher(
    new Request(`${access.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${encodeURIComponent(access.clientId)}:${encodeURIComponent(access.clientSecret)}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials&scope=admin:orders',
      signal: AbortSignal.timeout(15_000),
    }),
  );
  if (!tokenAnswer.ok) {
    io.err(`The token endpoint refused the admin client: HTTP ${tokenAnswer.status} ${await tokenAnswer.text()}`);
    return 1;
  }
  const { access_token: token } = (await tokenAnswer.json()) as { access_token: string };
  const sdk = createStorefrontClient({
    baseUrl: access.baseUrl,
    fetch: fetcher,
    headers: { Authorization: `Bearer ${token}` },
  });
  const [, action, id] = positionals;
  const key = { 'Idempotency-Key': (values['idempotency-key'] as string | undefined) ?? randomUUID() };
  const signal = AbortSignal.timeout(30_000);
  const path = { id: id ?? '' };
  let answer: { data?: unknown; error?: unknown; response: Response };
  switch (action) {
    case 'list':
      answer = await sdk.GET('/admin/orders', {
        params: {
          query: {
            status: values.status,
            fulfilment_status: values['fulfilment-status'],
            limit: values.limit === undefined ? undefined : Number(values.limit),
            cursor: values.cursor,
          },
        },
        signal,
      });
      break;
    case 'show':
      answer = await sdk.GET('/admin/orders/{id}', { params: { path }, signal });
      break;
    case 'ship':
      answer = await sdk.POST('/admin/orders/{id}/shipments', {
        params: { path, header: key },
        body: {
          carrier: values.carrier,
          tracking_number: values['tracking-number'],
          ...(values['tracking-url'] ? { tracking_url: values['tracking-url'] } : {}),
          ...(values.line ? { line_items: lineQuantities(values.line) } : {}),
        },
        signal,
      });
      break;
    case 'deliver':
      answer = await sdk.POST('/admin/orders/{id}/deliver', { params: { path, header: key }, signal });
      break;
    case 'cancel':
      answer = await sdk.POST('/admin/orders/{id}/cancel', {
        params: { path, header: key },
        ...(values.reason ? { body: { reason: values.reason } } : {}),
        signal,
      });
      break;
    case 'refund':
      answer = await sdk.POST('/admin/orders/{id}/refunds', {
        params: { path, header: key },
        body: {
          ...(values.amount === undefined ? {} : { amount: Number(values.amount) }),
          ...(values.restock ? { restock: lineQuantities(values.restock) } : {}),
          ...(values.reason ? { reason: values.reason } : {}),
        },
        signal,
      });
      break;
    default:
      io.err(USAGE);
      return 2;
  }
  if (answer.error !== undefined) {
    io.err(`HTTP ${answer.response.status}: ${JSON.stringify(answer.error)}`);
    return 1;
  }
  if (values.json) io.out(JSON.stringify(answer.data));
  else if (action === 'list') io.out(listTable((answer.data as { data: Summary[] }).data));
  else io.out(orderTable(answer.data as AdminOrder));
  return 0;
}

/** Runs one command; resolves to the exit code (0 done, 1 refused, 2 bad usage). */
export async function runAdminCommand(
  deps: Pick<Deps, 'db' | 'now' | 'log'> | ApiAccess,
  argv: string[],
  io: CommandIo,
): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        scope: { type: 'string' },
        json: { type: 'boolean' },
        status: { type: 'string', multiple: true },
        'fulfilment-status': { type: 'string', multiple: true },
        limit: { type: 'string' },
        cursor: { type: 'string' },
        carrier: { type: 'string' },
        'tracking-number': { type: 'string' },
        'tracking-url': { type: 'string' },
        line: { type: 'string', multiple: true },
        amount: { type: 'string' },
        restock: { type: 'string', multiple: true },
        reason: { type: 'string' },
        'idempotency-key': { type: 'string' },
      },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const [area, action] = parsed.positionals;
  if (area === 'orders' && 'baseUrl' in deps) return ordersCommand(deps, parsed.positionals, parsed.values, io);
  if (area !== 'clients' || !('db' in deps) || action !== 'create' || parsed.positionals.length !== 2) {
    io.err(USAGE);
    return 2;
  }
  const { name, scope, json } = parsed.values;
  if (name === undefined || scope === undefined) {
    io.err(`--name and --scope are required.\n${USAGE}`);
    return 2;
  }
  try {
    const client = await createOperatorClient(deps, { name, scope });
    if (json) io.out(JSON.stringify(client));
    else
      io.out(
        [
          `client_id      ${client.client_id}`,
          `client_secret  ${client.client_secret}`,
          `scope          ${client.scope}`,
          '',
          'The client secret is shown only this once: store it now.',
        ].join('\n'),
      );
    return 0;
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    io.err(error.message);
    return 1;
  }
}
