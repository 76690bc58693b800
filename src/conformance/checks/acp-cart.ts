// ACP's cart (schema.cart.json and the ACP cart RFC: POST /carts, GET and POST /carts/{id}, POST /carts/{id}/cancel,
// and `cart_id` on checkout create), run when the discovery document lists the `carts` service. Every cart body is
// validated against the version's Cart schema, every refusal against Error.
import type { Answer, Json } from '../client.js';
import { expectThat, type Check } from './check.js';
import { acpCall, acpLines, acpToken, type AcpContext } from './acp-context.js';

export const acpCartSpec = (section: string) =>
  `ACP {version}, schema.cart.json and rfcs/rfc.cart.md › ${section} (https://github.com/agentic-commerce-protocol/agentic-commerce-protocol/tree/main/rfcs/rfc.cart.md)`;

const cartCall = (context: AcpContext, method: string, path: string, body?: Json) =>
  acpCall(context, method, path, body, { schema: 'Cart' });

/** A cart of the fixture's items: 201 with a Cart. */
export async function createCart(context: AcpContext): Promise<Answer> {
  acpToken(context);
  const lines = acpLines(context);
  const created = await cartCall(context, 'POST', '/carts', { line_items: lines });
  expectThat(created.status === 201 && typeof created.body?.id === 'string', '201 with a Cart', created);
  return created;
}

const quantities = (body: Json) => (body?.line_items ?? []).map((line: Json) => [line.item?.id, line.quantity]);

export const acpCartChecks: Check<AcpContext>[] = [
  {
    id: 'acp.cart.create',
    title: 'create answers 201 with a Cart of the requested lines, and get answers it',
    spec: acpCartSpec('4.2 Create Cart, 4.3 Get Cart'),
    async run(context) {
      const created = await createCart(context);
      const wanted = acpLines(context).map((line) => [line.id, line.quantity]);
      expectThat(
        JSON.stringify(quantities(created.body)) === JSON.stringify(wanted),
        `line_items ${JSON.stringify(wanted)}`,
        created,
      );
      const read = await cartCall(context, 'GET', `/carts/${created.body.id}`);
      expectThat(
        read.status === 200 && JSON.stringify(read.body?.totals) === JSON.stringify(created.body.totals),
        `200 with cart ${created.body.id} and the same totals`,
        read,
      );
    },
  },
  {
    id: 'acp.cart.update',
    title: 'update replaces the lines (full replacement) and answers 200',
    spec: acpCartSpec('4.4 Update Cart'),
    async run(context) {
      const created = await createCart(context);
      const lines = acpLines(context, 1);
      const updated = await cartCall(context, 'POST', `/carts/${created.body.id}`, { line_items: lines });
      const wanted = lines.map((line) => [line.id, line.quantity]);
      expectThat(
        updated.status === 200 && JSON.stringify(quantities(updated.body)) === JSON.stringify(wanted),
        `200 with line_items ${JSON.stringify(wanted)}`,
        updated,
      );
    },
  },
  {
    id: 'acp.cart.to-checkout',
    title: 'checkout create with cart_id answers 201 with a session of the cart’s lines',
    spec: acpCartSpec('3.4 Cart-to-Checkout Conversion'),
    async run(context) {
      const created = await createCart(context);
      const session = await acpCall(context, 'POST', '/checkout_sessions', {
        cart_id: created.body.id,
        line_items: [],
        currency: context.currency,
        capabilities: {},
      });
      expectThat(
        session.status === 201 && JSON.stringify(quantities(session.body)) === JSON.stringify(quantities(created.body)),
        `201 with a checkout session of the cart's lines ${JSON.stringify(quantities(created.body))}`,
        session,
      );
    },
  },
  {
    id: 'acp.cart.cancel',
    title: 'cancel answers 200 with the cart; afterwards the cart is a 404',
    spec: acpCartSpec('4.5 Cancel Cart, 9 (MUST return 404 for canceled carts)'),
    async run(context) {
      const created = await createCart(context);
      const canceled = await cartCall(context, 'POST', `/carts/${created.body.id}/cancel`, {});
      expectThat(canceled.status === 200 && canceled.body?.id === created.body.id, '200 with the cart', canceled);
      const read = await cartCall(context, 'GET', `/carts/${created.body.id}`);
      expectThat(read.status === 404, '404 for the cancelled cart', read);
    },
  },
];
