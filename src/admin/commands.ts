// The operator's command line (`npm run admin -- …`), as a function of its arguments: what the entry point
// (src/admin/cli.ts) runs, and what tests run against a service's own database. `clients create` talks to the database
// directly through the OAuth service (an admin client cannot be had any other way); the secret is printed once.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { createStorefrontClient, type components } from '../../sdk/index.js';
import type { Deps } from '../deps.js';
import { DomainError } from '../domain/errors.js';
import { IdSource } from '../domain/ids.js';
import { createOperatorClient } from '../services/oauth.js';

export const USAGE = `usage: npm run admin -- clients create --name NAME --scope "SCOPE ..." [--json]
       npm run admin -- orders list [--status S] [--fulfilment-status F] [--limit N] [--cursor C] [--json]
       npm run admin -- orders show|deliver|cancel ORDER_ID [--json]
       npm run admin -- orders ship ORDER_ID --carrier C --tracking-number T [--tracking-url U] [--line LINE:QTY ...]
       npm run admin -- orders refund ORDER_ID [--amount MINOR_UNITS] [--restock LINE:QTY ...] [--reason R]
       npm run admin -- prices set VARIANT_ID --price REGION_ID:MINOR_UNITS ... [--json]
       npm run admin -- stock set VARIANT_ID --quantity N [--reason R] [--json]
       npm run admin -- stock adjust VARIANT_ID --by=N (negative to take away: --by=-3) [--reason R] [--json]
       npm run admin -- products publish|unpublish PRODUCT_ID_OR_HANDLE [--reason R] [--json]
       npm run admin -- promotions list [--json]
       npm run admin -- promotions create CODE --kind percentage|fixed --value N [--region REGION_ID]
                         [--min-subtotal MINOR_UNITS] [--usage-limit N] [--starts-at ISO] [--ends-at ISO] [--json]
       npm run admin -- promotions expire CODE [--json]

Every command but clients calls the admin API through the SDK generated from the contract (sdk/), at ADMIN_API_URL
(default AGENT_BASE_URL, then BASE_URL), as the client ADMIN_CLIENT_ID / ADMIN_CLIENT_SECRET (scope admin:orders for
orders, admin:catalog for prices, stock and products, admin:promotions for promotions); each change is sent under a
new Idempotency-Key (--idempotency-key K to retry one).

clients create makes an OAuth client_credentials client for the store's operator or its tools. Scopes: admin:orders,
admin:catalog, admin:promotions (and the agents' catalog:read, cart:write, orders:read). The client secret is shown
once and stored only as a hash. --json prints {"client_id", "client_secret", "scope"}. Docs: docs/admin.md.`;

/** The areas the API commands cover, and the scope each needs. */
export const API_AREAS: Record<string, string> = {
  orders: 'admin:orders',
  prices: 'admin:catalog',
  stock: 'admin:catalog',
  products: 'admin:catalog',
  promotions: 'admin:promotions',
};

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

async function apiCommand(access: ApiAccess, positionals: string[], values: Record<string, any>, io: CommandIo) {
  const [area, action, id] = positionals;
  const fetcher = access.fetch ?? ((request: Request) => fetch(request));
  const tokenAnswer = await fetcher(
    new Request(`${access.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/x-www-form-urlencoded',
        Authorization: `Basic ${Buffer.from(`${encodeURIComponent(access.clientId)}:${encodeURIComponent(access.clientSecret)}`).toString('base64')}`,
      },
      body: `grant_type=client_credentials&scope=${API_AREAS[area!]}`,
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
  const key = { 'Idempotency-Key': (values['idempotency-key'] as string | undefined) ?? randomUUID() };
  const signal = AbortSignal.timeout(30_000);
  const path = { id: id ?? '' };
  const answer = await (area === 'orders'
    ? ordersCall(sdk, action, path, key, values, signal)
    : catalogCall(sdk, `${area} ${action}`, id ?? '', key, values, signal));
  if (answer === undefined) {
    io.err(USAGE);
    return 2;
  }
  if (answer.error !== undefined) {
    io.err(`HTTP ${answer.response.status}: ${JSON.stringify(answer.error)}`);
    return 1;
  }
  if (values.json) io.out(JSON.stringify(answer.data));
  else io.out(tableOf(`${area} ${action}`, answer.data));
  return 0;
}

type Sdk = ReturnType<typeof createStorefrontClient>;
type Call = { data?: unknown; error?: unknown; response: Response } | undefined;
type Key = { 'Idempotency-Key': string };

async function ordersCall(
  sdk: Sdk,
  action: string | undefined,
  path: { id: string },
  key: Key,
  values: Record<string, any>,
  signal: AbortSignal,
): Promise<Call> {
  switch (action) {
    case 'list':
      return sdk.GET('/admin/orders', {
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
    case 'show':
      return sdk.GET('/admin/orders/{id}', { params: { path }, signal });
    case 'ship':
      return sdk.POST('/admin/orders/{id}/shipments', {
        params: { path, header: key },
        body: {
          carrier: values.carrier,
          tracking_number: values['tracking-number'],
          ...(values['tracking-url'] ? { tracking_url: values['tracking-url'] } : {}),
          ...(values.line ? { line_items: lineQuantities(values.line) } : {}),
        },
        signal,
      });
    case 'deliver':
      return sdk.POST('/admin/orders/{id}/deliver', { params: { path, header: key }, signal });
    case 'cancel':
      return sdk.POST('/admin/orders/{id}/cancel', {
        params: { path, header: key },
        ...(values.reason ? { body: { reason: values.reason } } : {}),
        signal,
      });
    case 'refund':
      return sdk.POST('/admin/orders/{id}/refunds', {
        params: { path, header: key },
        body: {
          ...(values.amount === undefined ? {} : { amount: Number(values.amount) }),
          ...(values.restock ? { restock: lineQuantities(values.restock) } : {}),
          ...(values.reason ? { reason: values.reason } : {}),
        },
        signal,
      });
    default:
      return undefined;
  }
}

/** A number option as sent (not a number: sent as text, and the API refuses it as the contract says). */
const numberOf = (value: string | undefined) =>
  value === undefined ? undefined : /^-?\d+$/.test(value) ? Number(value) : value;
const note = (values: Record<string, any>) => (values.reason ? { body: { reason: values.reason as string } } : {});

async function catalogCall(
  sdk: Sdk,
  command: string,
  id: string,
  key: Key,
  values: Record<string, any>,
  signal: AbortSignal,
): Promise<Call> {
  const reason = values.reason === undefined ? {} : { reason: values.reason as string };
  switch (command) {
    case 'prices set':
      return sdk.PUT('/admin/variants/{id}/prices', {
        params: { path: { id }, header: key },
        body: {
          prices: ((values.price as string[] | undefined) ?? []).map((price) => {
            const at = price.lastIndexOf(':');
            return { region_id: price.slice(0, at), amount: numberOf(price.slice(at + 1)) as number };
          }),
        },
        signal,
      });
    case 'stock set':
    case 'stock adjust':
      return sdk.POST('/admin/variants/{id}/stock', {
        params: { path: { id }, header: key },
        body:
          command === 'stock set'
            ? { quantity: numberOf(values.quantity) as number, ...reason }
            : { adjustment: numberOf(values.by) as number, ...reason },
        signal,
      });
    case 'products publish':
      return sdk.POST('/admin/products/{id}/publish', {
        params: { path: { id }, header: key },
        ...note(values),
        signal,
      });
    case 'products unpublish':
      return sdk.POST('/admin/products/{id}/unpublish', {
        params: { path: { id }, header: key },
        ...note(values),
        signal,
      });
    case 'promotions list':
      return sdk.GET('/admin/promotions', { signal });
    case 'promotions create': {
      const optional: Record<string, unknown> = {
        region_id: values.region,
        min_subtotal: numberOf(values['min-subtotal']),
        usage_limit: numberOf(values['usage-limit']),
        starts_at: values['starts-at'],
        ends_at: values['ends-at'],
        reason: values.reason,
      };
      return sdk.POST('/admin/promotions', {
        params: { header: key },
        body: {
          code: id,
          kind: values.kind,
          value: numberOf(values.value) as number,
          ...Object.fromEntries(Object.entries(optional).filter(([, value]) => value !== undefined)),
        },
        signal,
      });
    }
    case 'promotions expire':
      return sdk.POST('/admin/promotions/{code}/expire', { params: { path: { code: id }, header: key }, signal });
    default:
      return undefined;
  }
}

type Promotion = components['schemas']['AdminPromotion'];

function promotionLine(promotion: Promotion): string {
  const value =
    promotion.kind === 'percentage' ? `${promotion.value / 100}%` : `${promotion.value} ${promotion.currency}`;
  return [
    promotion.code,
    value,
    promotion.currency ?? 'any',
    `min ${promotion.min_subtotal ?? '-'}`,
    `redeemed ${promotion.times_redeemed}/${promotion.usage_limit ?? '∞'}`,
    `${promotion.starts_at ?? '-'} .. ${promotion.ends_at ?? '-'}`,
  ].join('  ');
}

/** A readable table of an answer (--json prints the answer itself). */
function tableOf(command: string, data: unknown): string {
  if (command === 'orders list') return listTable((data as { data: Summary[] }).data);
  if (command.startsWith('orders ')) return orderTable(data as AdminOrder);
  if (command === 'prices set') {
    const { variant_id: variant, prices } = data as components['schemas']['AdminVariantPrices'];
    return [variant, ...prices.map((price) => `  ${price.region_id}  ${price.amount} ${price.currency}`)].join('\n');
  }
  if (command.startsWith('stock ')) {
    const stock = data as components['schemas']['AdminVariantStock'];
    return `${stock.variant_id}  in stock ${stock.inventory_quantity}${stock.manage_inventory ? '' : ' (not kept)'}`;
  }
  if (command.startsWith('products ')) {
    const product = data as components['schemas']['AdminProduct'];
    return `${product.id}  ${product.handle}  ${product.published ? 'published' : 'unpublished'}`;
  }
  if (command === 'promotions list') return (data as { data: Promotion[] }).data.map(promotionLine).join('\n');
  return promotionLine(data as Promotion);
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
        price: { type: 'string', multiple: true },
        quantity: { type: 'string' },
        by: { type: 'string' },
        kind: { type: 'string' },
        value: { type: 'string' },
        region: { type: 'string' },
        'min-subtotal': { type: 'string' },
        'usage-limit': { type: 'string' },
        'starts-at': { type: 'string' },
        'ends-at': { type: 'string' },
      },
    });
  } catch (error) {
    io.err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const [area, action] = parsed.positionals;
  if (area !== undefined && Object.hasOwn(API_AREAS, area) && 'baseUrl' in deps)
    return apiCommand(deps, parsed.positionals, parsed.values, io);
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
    // One command, one client: its ids come from a source of its own (the CLI runs no service).
    const client = await createOperatorClient({ ...deps, ids: new IdSource() }, { name, scope });
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
