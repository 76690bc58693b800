// UCP cart (dev.ucp.shopping.cart) over REST: a cart is created, read, replaced and converted into a checkout
// (`cart_id` on the checkout create, when checkout is advertised), and another one cancelled; every body is validated
// against the tested version's cart_response (and the checkout's checkout_response).
import { randomUUID } from 'node:crypto';
import type { Answer, Json } from '../client.js';
import { expectThat, skip, type Check } from './check.js';
import { ucpLines, ucpSpec, type UcpContext } from './ucp-context.js';

export const CART = 'dev.ucp.shopping.cart';

type CartContext = UcpContext & { restEndpoint?: string; profile: string };

async function send(context: CartContext, method: string, path: string, body?: Json): Promise<Answer> {
  expectThat(context.restEndpoint, 'a REST endpoint for carts');
  return context.client.request(`${context.restEndpoint.replace(/\/+$/, '')}${path}`, {
    method,
    headers: {
      'UCP-Agent': `profile="${context.profile}"`,
      'Request-Id': randomUUID(),
      Accept: 'application/json',
      ...(method === 'GET' ? {} : { 'Idempotency-Key': randomUUID() }),
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** Fails unless the answer has `status` and a body valid against `schema`. */
function expectValid(context: CartContext, answer: Answer, status: number, schema: string): void {
  expectThat(answer.status === status, String(status), answer);
  const problems = context.schemas.problems(schema, answer.body);
  expectThat(
    problems.length === 0,
    `a body valid against UCP ${context.version} ${schema}`,
    answer,
    `${problems.length} schema errors, first: ${problems[0]?.path} ${problems[0]?.message}`,
  );
}

/** A cart created from the items to buy (a cart, not an error_response). */
async function createCart(context: CartContext, extraQuantity = 0): Promise<Json> {
  const created = await send(context, 'POST', '/carts', { line_items: ucpLines(context, extraQuantity) });
  expectValid(context, created, 201, 'cart_response');
  expectThat(created.body.ucp?.status !== 'error' && typeof created.body.id === 'string', 'a cart with an id', created);
  return created.body;
}

const quantities = (body: Json) => (body.line_items as Json[]).map((line) => [line.item.id, line.quantity]);

export const ucpCartChecks: Check<CartContext>[] = [
  {
    id: 'ucp.cart.lifecycle',
    title: 'a cart is created, read, replaced and converted into a checkout by cart_id',
    spec: ucpSpec('cart', 'Cart-to-Checkout Conversion'),
    async run(context) {
      const cart = await createCart(context);
      const path = `/carts/${encodeURIComponent(cart.id)}`;
      const read = await send(context, 'GET', path);
      expectValid(context, read, 200, 'cart_response');
      expectThat(
        read.body.id === cart.id && JSON.stringify(read.body.totals) === JSON.stringify(cart.totals),
        `cart ${cart.id} with the totals it was created with`,
        read,
      );
      const replaced = await send(context, 'PUT', path, { id: cart.id, line_items: ucpLines(context, 1) });
      expectValid(context, replaced, 200, 'cart_response');
      const wanted = ucpLines(context, 1).map((line) => [line.item.id, line.quantity]);
      expectThat(
        JSON.stringify(quantities(replaced.body)) === JSON.stringify(wanted),
        `lines ${JSON.stringify(wanted)}`,
        replaced,
      );
      if (!context.capabilities.has('dev.ucp.shopping.checkout'))
        skip('the merchant does not advertise dev.ucp.shopping.checkout to convert the cart into');
      const checkout = await send(context, 'POST', '/checkout-sessions', { cart_id: cart.id });
      expectValid(context, checkout, 201, 'checkout_response');
      expectThat(
        checkout.body.ucp?.status !== 'error' &&
          JSON.stringify(quantities(checkout.body)) === JSON.stringify(quantities(replaced.body)),
        `a checkout with the cart's lines ${JSON.stringify(quantities(replaced.body))}`,
        checkout,
      );
    },
  },
  {
    id: 'ucp.cart.cancel',
    title: 'a cancelled cart is answered as it was, then is not found',
    spec: ucpSpec('cart', 'Cancel Cart'),
    async run(context) {
      const cart = await createCart(context);
      const path = `/carts/${encodeURIComponent(cart.id)}`;
      const canceled = await send(context, 'POST', `${path}/cancel`);
      expectValid(context, canceled, 200, 'cart_response');
      expectThat(canceled.body.id === cart.id, `cart ${cart.id}`, canceled);
      const read = await send(context, 'GET', path);
      expectValid(context, read, 200, 'cart_response');
      expectThat(read.body.ucp?.status === 'error', 'an error_response (the cart no longer exists)', read);
    },
  },
];
