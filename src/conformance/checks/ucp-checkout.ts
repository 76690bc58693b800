// UCP checkout capability (dev.ucp.shopping.checkout), on each advertised transport: create, get, update, complete,
// cancel, idempotency, business outcomes as 200 with messages, and totals that add up.
import { randomUUID } from 'node:crypto';
import type { Json } from '../client.js';
import { ucpTotalsProblems } from '../invariants.js';
import { expectThat, type Check } from './check.js';
import { NO_SUCH_ITEM, ucpCreateBody, ucpLines, ucpSpec, type UcpContext } from './ucp-context.js';
import type { UcpOutcome } from './ucp-transport.js';

const isSuccess = (outcome: UcpOutcome) =>
  !outcome.protocolError && outcome.body?.ucp?.status !== 'error' && typeof outcome.body?.id === 'string';

/** Creates a checkout of the fixture's items and expects it to succeed (201 on REST). */
export async function createCheckout(context: UcpContext, extra: Json = {}): Promise<UcpOutcome> {
  const created = await context.transport.create(ucpCreateBody(context, extra));
  expectThat(
    isSuccess(created) && (context.transport.name !== 'rest' || created.status === 201),
    'a created checkout (201 with ucp.status success and an id)',
    created.answer,
  );
  return created;
}

const quantities = (checkout: Json) =>
  JSON.stringify((checkout.line_items ?? []).map((line: Json) => [line.item?.id, line.quantity]));

export const ucpCheckoutChecks: Check<UcpContext>[] = [
  {
    id: 'ucp.checkout.create',
    title: 'create answers the checkout with the requested lines, in the tested version',
    spec: ucpSpec('checkout', 'Create Checkout'),
    async run(context) {
      const created = await createCheckout(context);
      const wanted = JSON.stringify(ucpLines(context).map((line) => [line.item.id, line.quantity]));
      expectThat(quantities(created.body) === wanted, `line items ${wanted}`, created.answer);
      expectThat(
        created.body.ucp?.version === context.version,
        `ucp.version ${context.version} (the version negotiated)`,
        created.answer,
      );
      expectThat(
        typeof created.body.currency === 'string' && Array.isArray(created.body.totals),
        'a currency and totals',
        created.answer,
      );
    },
  },
  {
    id: 'ucp.checkout.get',
    title: 'get answers the checkout as created',
    spec: ucpSpec('checkout', 'Get Checkout'),
    async run(context) {
      const created = await createCheckout(context);
      const read = await context.transport.get(created.body.id);
      expectThat(
        isSuccess(read) && read.status === 200 && read.body.id === created.body.id,
        `200 with checkout ${created.body.id}`,
        read.answer,
      );
      expectThat(
        quantities(read.body) === quantities(created.body) &&
          JSON.stringify(read.body.totals) === JSON.stringify(created.body.totals),
        'the same lines and totals as the create',
        read.answer,
      );
    },
  },
  {
    id: 'ucp.checkout.update',
    title: 'update replaces the lines and keeps a line id it is sent',
    spec: ucpSpec('checkout', 'Update Checkout'),
    async run(context) {
      const created = await createCheckout(context);
      const lines = (created.body.line_items as Json[]).map((line) => ({
        id: line.id,
        item: { id: line.item.id },
        quantity: line.quantity + 1,
      }));
      const updated = await context.transport.update(created.body.id, { id: created.body.id, line_items: lines });
      expectThat(isSuccess(updated) && updated.status === 200, '200 with the updated checkout', updated.answer);
      const got = (updated.body.line_items as Json[]).map((line) => [line.id, line.quantity]);
      expectThat(
        JSON.stringify(got) === JSON.stringify(lines.map((line) => [line.id, line.quantity])),
        `lines ${JSON.stringify(lines.map((line) => [line.id, line.quantity]))} (ids kept, quantities updated)`,
        updated.answer,
      );
    },
  },
  {
    id: 'ucp.checkout.unknown-item',
    title: 'an item the merchant does not sell is a business outcome: 200 with an error message, not a 4xx/5xx',
    spec: ucpSpec('checkout', 'Error Handling (business outcomes are messages)'),
    async run(context) {
      const answer = await context.transport.create({ line_items: [{ item: { id: NO_SUCH_ITEM }, quantity: 1 }] });
      const messages: Json[] = answer.body?.messages ?? [];
      expectThat(
        !answer.protocolError &&
          (answer.status === 200 || answer.status === 201) &&
          messages.some((message) => message.type === 'error'),
        `200 with messages[] holding an error (item ${NO_SUCH_ITEM})`,
        answer.answer,
      );
    },
  },
  {
    id: 'ucp.checkout.idempotency',
    title: 'the same Idempotency-Key and body replays the checkout; another body under it is a 409 conflict',
    spec: ucpSpec('checkout-rest', 'Idempotency'),
    async run(context) {
      const key = randomUUID();
      const body = ucpCreateBody(context);
      const first = await context.transport.create(body, { idempotencyKey: key });
      expectThat(isSuccess(first), 'a created checkout', first.answer);
      const replay = await context.transport.create(JSON.parse(JSON.stringify(body)), { idempotencyKey: key });
      expectThat(
        isSuccess(replay) && replay.body.id === first.body.id && replay.status === first.status,
        `the replayed answer (${first.status}, checkout ${first.body.id})`,
        replay.answer,
      );
      const other = { ...body, line_items: ucpLines(context, 1) };
      const conflict = await context.transport.create(other, { idempotencyKey: key });
      expectThat(
        conflict.protocolError && (context.transport.name !== 'rest' || conflict.status === 409),
        context.transport.name === 'rest'
          ? '409 (key reused with another body)'
          : 'a JSON-RPC error (key reused with another body)',
        conflict.answer,
      );
    },
  },
  {
    id: 'ucp.checkout.complete-without-payment',
    title: 'complete without a payment instrument does not complete the checkout',
    spec: ucpSpec('checkout', 'Complete Checkout'),
    async run(context) {
      const created = await createCheckout(context);
      const answer = await context.transport.complete(created.body.id, { payment: { instruments: [] } });
      const messages: Json[] = answer.body?.messages ?? [];
      expectThat(
        answer.protocolError ||
          answer.body?.status !== 'completed' ||
          messages.some((message) => message.type === 'error'),
        'a checkout that is not completed (or an error)',
        answer.answer,
      );
      expectThat(!answer.body?.order, 'no order', answer.answer);
    },
  },
  {
    id: 'ucp.checkout.cancel',
    title: 'cancel answers the checkout canceled, and it stays canceled',
    spec: ucpSpec('checkout', 'Cancel Checkout'),
    async run(context) {
      const created = await createCheckout(context);
      const canceled = await context.transport.cancel(created.body.id);
      expectThat(
        isSuccess(canceled) && canceled.status === 200 && canceled.body.status === 'canceled',
        '200 with status canceled',
        canceled.answer,
      );
      const read = await context.transport.get(created.body.id);
      expectThat(isSuccess(read) && read.body.status === 'canceled', 'the checkout read back canceled', read.answer);
    },
  },
  {
    id: 'ucp.checkout.totals',
    title: 'every checkout received has one subtotal and one total, integer amounts, and entries that add up',
    spec: ucpSpec('checkout', 'Totals'),
    async run(context) {
      if (!context.checkouts.length) await createCheckout(context);
      const problems = context.checkouts.flatMap((checkout) =>
        ucpTotalsProblems(checkout).map((problem) => `${checkout.id}: ${problem}`),
      );
      expectThat(
        problems.length === 0,
        `totals that add up in all ${context.checkouts.length} checkouts`,
        undefined,
        `${problems.length} broken, first: ${problems[0]}`,
      );
    },
  },
];

/** REST-only: what the HTTP binding fixes (statuses and headers). */
export const ucpRestChecks: Check<UcpContext>[] = [
  {
    id: 'ucp.rest.idempotency-key-required',
    title: 'a create without Idempotency-Key is refused with 400',
    spec: ucpSpec('checkout-rest', 'Headers (Idempotency-Key, required)'),
    async run(context) {
      const answer = await context.transport.create(ucpCreateBody(context), { headers: { 'Idempotency-Key': null } });
      expectThat(answer.status === 400, '400 (Idempotency-Key is a required header)', answer.answer);
    },
  },
  {
    id: 'ucp.rest.invalid-request',
    title: 'a request the schema refuses (quantity 0) is a 400, not a business outcome or a 5xx',
    spec: ucpSpec('checkout-rest', 'Status Codes (400 Bad Request)'),
    async run(context) {
      const [line] = ucpLines(context);
      const answer = await context.transport.create({ line_items: [{ ...line, quantity: 0 }] });
      expectThat(answer.status === 400, '400 (line_items[].quantity must be ≥ 1)', answer.answer);
    },
  },
  {
    id: 'ucp.rest.content-type',
    title: 'checkout answers are application/json',
    spec: ucpSpec('checkout-rest', 'Content Types'),
    async run(context) {
      const created = await createCheckout(context);
      const type = created.answer.headers.get('content-type') ?? '';
      expectThat(
        type.startsWith('application/json'),
        'Content-Type application/json',
        undefined,
        `Content-Type ${type || '(none)'}`,
      );
    },
  },
];
