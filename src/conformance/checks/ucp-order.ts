// UCP order (dev.ucp.shopping.order). What any merchant can be asked without a paid order of its own: an order the
// platform did not create (here: an id no merchant has) is a business outcome, 200 with order_response's
// error_response naming `not_found` (rest.openapi.json get_order answers 200 only), never a 404 or a 5xx. With the
// fixture's `ucp.order_id` (an order the operator made through a paid checkout, under `ucp.profile`), the order
// itself: read over REST (`GET /orders/{id}`) and MCP (`get_order`), valid against the version's order schema, totals
// that add up, fulfillment events and adjustments well-formed and in order, its checkout, and refused to another
// platform. With --order-events, the events of an order made under the runner's own profile (it declares a
// config.webhook_url it serves): signed with a published key, valid orders.
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { parseJson, type Answer, type Json } from '../client.js';
import type { UcpOrderFixture } from '../fixture.js';
import { ucpTotalsProblems } from '../invariants.js';
import { publishedKeys, ucpWebhookProblems, type ReceivedDelivery } from '../order-events.js';
import { knownVersions, type SchemaSets } from '../schemas.js';
import { expectThat, skip, type Check } from './check.js';
import { ucpSpec, type UcpContext } from './ucp-context.js';
import type { McpSession } from './ucp-transport.js';

export const ORDER = 'dev.ucp.shopping.order';

export type OrderContext = UcpContext & {
  restEndpoint?: string;
  /** The runner's own platform profile (all advertised capabilities). */
  profile: string;
  /** The merchant's MCP session, when it advertises MCP (for get_order). */
  mcp?: McpSession;
  /** The run's compiled schemas: an order is judged in the version it was negotiated in (its platform's). */
  schemaSets?: SchemaSets;
};

const NO_ORDER =
  'the fixture names no order (ucp.order_id, or --order-id) and no order event told of one: pay a checkout on the merchant and give its order id';

/** The fixture's order, and the profile it is read with (the one it was made under, else the runner's). */
function fixtureOrder(context: OrderContext): UcpOrderFixture & { profile: string } {
  const order = context.fixture.ucp;
  if (!order) skip(NO_ORDER);
  return { ...order, profile: order.profile ?? context.profile };
}

function getOrder(context: OrderContext, id: string, profile: string): Promise<Answer> {
  expectThat(context.restEndpoint, 'a REST endpoint for orders');
  return context.client.request(`${context.restEndpoint.replace(/\/+$/, '')}/orders/${encodeURIComponent(id)}`, {
    method: 'GET',
    headers: { 'UCP-Agent': `profile="${profile}"`, 'Request-Id': randomUUID(), Accept: 'application/json' },
  });
}

/**
 * Fails unless `body` is valid against `schema` in the version it says it is in (an order is answered in the version
 * negotiated with the platform that made it, which may be older than the tested one), else the tested version.
 */
function expectValid(context: OrderContext, schema: string, answer: Answer | undefined, body: Json): void {
  const said: unknown = body?.ucp?.version;
  const version =
    typeof said === 'string' && context.schemaSets && knownVersions('ucp').includes(said) ? said : context.version;
  const schemas = version === context.version ? context.schemas : context.schemaSets!('ucp', version);
  const problems = schemas.problems(schema, body);
  expectThat(
    problems.length === 0,
    `a body valid against UCP ${version} ${schema}`,
    answer,
    `${problems.length} schema errors, first: ${problems[0]?.path} ${problems[0]?.message}`,
  );
}

/** The fixture's order read over REST by the platform that made it: a valid order, that order. */
async function readOrder(context: OrderContext): Promise<{ answer: Answer; order: Json }> {
  const { order_id, profile } = fixtureOrder(context);
  const answer = await getOrder(context, order_id, profile);
  expectThat(answer.status === 200, '200 (get_order answers business outcomes with 200)', answer);
  expectThat(
    answer.body?.ucp?.status !== 'error' && answer.body?.id === order_id,
    `order ${order_id} (read with the profile it was made under: ${profile})`,
    answer,
  );
  expectValid(context, 'order', answer, answer.body);
  return { answer, order: answer.body };
}

const time = (value: unknown) => (typeof value === 'string' ? Date.parse(value) : Number.NaN);

/** Events or adjustments: unique ids, occurred_at in order, lines that are the order's with a positive quantity. */
function logProblems(where: string, entries: Json[], lines: Map<string, number>): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  entries.forEach((entry, index) => {
    const at = `${where}[${index}]`;
    if (ids.has(entry.id)) problems.push(`${at}: id ${entry.id} repeats`);
    ids.add(entry.id);
    if (Number.isNaN(time(entry.occurred_at))) problems.push(`${at}: occurred_at ${entry.occurred_at} is not a time`);
    else if (index > 0 && time(entry.occurred_at) < time(entries[index - 1].occurred_at))
      problems.push(`${at}: occurred_at ${entry.occurred_at} is before the entry above it (the log is append-only)`);
    for (const line of (entry.line_items ?? []) as Json[]) {
      const total = lines.get(line.id);
      if (total === undefined) problems.push(`${at}: line ${line.id} is not one of the order's`);
      else if (!(Number.isInteger(line.quantity) && line.quantity > 0 && line.quantity <= total))
        problems.push(`${at}: line ${line.id} quantity ${line.quantity} is not within 1..${total}`);
    }
    for (const total of (entry.totals ?? []) as Json[])
      if (!Number.isInteger(total.amount)) problems.push(`${at}: ${total.type} ${total.amount} is not an integer`);
  });
  return problems;
}

export const ucpOrderChecks: Check<OrderContext>[] = [
  {
    id: 'ucp.order.unknown',
    title: 'an order the platform did not create is a 200 error_response with not_found',
    spec: ucpSpec('order', 'Get Order'),
    async run(context) {
      const answer = await getOrder(context, `conformance-${randomUUID()}`, context.profile);
      expectThat(answer.status === 200, '200 (get_order answers business outcomes with 200)', answer);
      expectValid(context, 'order_response', answer, answer.body);
      const codes = ((answer.body?.messages ?? []) as Array<{ type?: string; code?: string }>)
        .filter((message) => message.type === 'error')
        .map((message) => message.code);
      expectThat(
        answer.body?.ucp?.status === 'error' && codes.includes('not_found'),
        'ucp.status error with an error message not_found',
        answer,
      );
    },
  },
  {
    id: 'ucp.order.read',
    title: "the fixture's order reads as a valid order of the tested version, of the checkout that made it",
    spec: ucpSpec('order', 'Get Order'),
    async run(context) {
      const { checkout_id } = fixtureOrder(context);
      const { answer, order } = await readOrder(context);
      expectThat(
        knownVersions('ucp').includes(order.ucp?.version),
        `ucp.version one of the versions the runner has schemas for (${knownVersions('ucp').join(', ')})`,
        answer,
      );
      if (checkout_id)
        expectThat(
          order.checkout_id === checkout_id,
          `checkout_id ${checkout_id} (the fixture's checkout)`,
          answer,
          `checkout_id ${order.checkout_id}`,
        );
    },
  },
  {
    id: 'ucp.order.totals',
    title: "the order's totals and its lines' totals add up; no line is fulfilled beyond its quantity",
    spec: ucpSpec('order', 'Order'),
    async run(context) {
      const { answer, order } = await readOrder(context);
      const problems = ucpTotalsProblems(order);
      (order.line_items as Json[]).forEach((line, index) => {
        const { total, fulfilled } = line.quantity ?? {};
        if (!(Number.isInteger(fulfilled) && fulfilled >= 0 && fulfilled <= total))
          problems.push(`$.line_items[${index}].quantity: fulfilled ${fulfilled} of ${total}`);
      });
      expectThat(problems.length === 0, 'totals that add up', answer, problems.join('; '));
    },
  },
  {
    id: 'ucp.order.events',
    title: "fulfillment events and adjustments name the order's lines, have unique ids, and are in time order",
    spec: ucpSpec('order', 'Fulfillment Events and Adjustments'),
    async run(context) {
      const { answer, order } = await readOrder(context);
      const lines = new Map<string, number>(
        (order.line_items as Json[]).map((line) => [line.id, Number(line.quantity?.total)]),
      );
      const problems = [
        ...logProblems('$.fulfillment.events', order.fulfillment?.events ?? [], lines),
        ...logProblems('$.adjustments', order.adjustments ?? [], lines),
      ];
      expectThat(problems.length === 0, 'well-formed events and adjustments', answer, problems.join('; '));
    },
  },
  {
    id: 'ucp.order.other-platform',
    title: 'another platform reading the order gets an error, not the order',
    spec: ucpSpec('order', 'Get Order'),
    async run(context) {
      const { order_id, profile } = fixtureOrder(context);
      const other = [context.profile, context.profiles.noDiscount].find((url) => url && url !== profile);
      if (!other) skip('no other platform profile to read with (--profile-url is the only one)');
      const answer = await getOrder(context, order_id, other);
      expectThat(answer.status === 200, '200 (get_order answers business outcomes with 200)', answer);
      expectValid(context, 'order_response', answer, answer.body);
      expectThat(
        answer.body?.ucp?.status === 'error' && answer.body?.id === undefined,
        `an error_response (order ${order_id} is the platform's at ${profile}, not ${other}'s)`,
        answer,
      );
    },
  },
];

/** get_order on the merchant's MCP endpoint answers what REST answers. */
export const ucpOrderMcpChecks: Check<OrderContext>[] = [
  {
    id: 'ucp.order.get-order',
    title: "get_order answers the fixture's order as GET /orders/{id} does",
    spec: ucpSpec('order', 'Get Order (MCP binding: get_order)'),
    async run(context) {
      const { order_id, profile } = fixtureOrder(context);
      if (!context.mcp) skip('the merchant advertises no MCP transport');
      const { order } = await readOrder(context);
      const { answer, message } = await context.mcp.rpc('tools/call', {
        name: 'get_order',
        arguments: { meta: { 'ucp-agent': { profile } }, id: order_id },
      });
      const content = message?.result?.structuredContent;
      expectThat(answer.status === 200 && content, '200 with result.structuredContent', answer);
      expectValid(context, 'order', answer, content);
      expectThat(isDeepStrictEqual(content, order), 'the body GET /orders/{id} answers', answer);
    },
  },
];

/** What the order-event checks are given: the events the runner's receiver got, and the merchant's published keys. */
export interface OrderEventsContext {
  schemas: UcpContext['schemas'];
  version: string;
  /** Where the events were delivered (the webhook_url of the runner's profile). */
  url: string;
  /** The profile URL to make the order under, and how long the runner waited. */
  profile: string;
  waitedSeconds: number;
  received: ReceivedDelivery[];
  /** The business profile of the tested version (its `keys` or `signing_keys`). */
  businessProfile: Json;
}

const eventName = (event: ReceivedDelivery, index: number) =>
  `event ${index + 1} (webhook-id ${String(event.headers['webhook-id'] ?? 'none')})`;

function someEvents(context: OrderEventsContext): ReceivedDelivery[] {
  if (!context.received.length)
    skip(`no order event arrived in ${context.waitedSeconds} s (make an order under ${context.profile})`);
  return context.received;
}

export const ucpOrderEventChecks: Check<OrderEventsContext>[] = [
  {
    id: 'ucp.order.event-received',
    title: "an order made under the runner's profile is told to its config.webhook_url",
    spec: ucpSpec('order', 'Order Event Webhook'),
    async run(context) {
      expectThat(
        context.received.length > 0,
        `an order event POSTed to ${context.url} within ${context.waitedSeconds} s of the run's start`,
        undefined,
        `none (was an order made under ${context.profile}?)`,
      );
    },
  },
  {
    id: 'ucp.order.event-signature',
    title: "every order event is signed (RFC 9421) with a key of the business profile, its Content-Digest the body's",
    spec: ucpSpec('signatures', 'Webhook Signatures'),
    async run(context) {
      const keys = publishedKeys(context.businessProfile);
      const problems = someEvents(context).flatMap((event, index) =>
        ucpWebhookProblems(event, context.url, keys).map((problem) => `${eventName(event, index)}: ${problem}`),
      );
      expectThat(
        problems.length === 0,
        `signed events under one of ${keys.length} published keys (${keys.map((key) => key.kid).join(', ')})`,
        undefined,
        problems.join('; '),
      );
    },
  },
  {
    id: 'ucp.order.event-body',
    title: 'every order event is an order valid against the tested version, with totals that add up',
    spec: ucpSpec('order', 'Order Event Webhook'),
    async run(context) {
      const problems = someEvents(context).flatMap((event, index) => {
        const body = parseJson(event.raw);
        const invalid = context.schemas.problems('order', body);
        return [
          ...(invalid.length
            ? [`${invalid.length} schema errors, first: ${invalid[0]?.path} ${invalid[0]?.message}`]
            : []),
          ...(invalid.length ? [] : ucpTotalsProblems(body)),
        ].map((problem) => `${eventName(event, index)}: ${problem}`);
      });
      expectThat(
        problems.length === 0,
        `orders valid against UCP ${context.version} order`,
        undefined,
        problems.join('; '),
      );
    },
  },
];
