// The ACP cart operations (the ACP cart RFC over schema.cart.json) and the checkout create that converts a cart
// (`cart_id`), run after the binding's authentication, version and idempotency steps (src/http/acp.ts): each checks
// its body first, outside any transaction, then runs inside the transaction that records its answer. Protocol errors
// are ProtocolErrors, rendered by the binding as ACP's flat Error.
import type { Db } from '../../db/knex.js';
import type { Deps } from '../../deps.js';
import { toAcpCart } from '../../domain/acp-cart.js';
import { toAcpCheckoutSession } from '../../domain/acp-checkout.js';
import { jsonResponse, ProtocolError } from '../../http/protocol-io.js';
import type { ProtocolResponse } from '../../protocols/answers.js';
import { checkRequest } from '../../protocols/requests.js';
import * as acpCarts from '../../services/acp-carts.js';
import type { LineProblem } from '../../services/protocol-sessions.js';
import { acpLinks, buyerOf, LINE_ERROR_CODES, requestedLines } from './checkout.js';

export type AcpCartOperation = 'create' | 'retrieve' | 'update' | 'cancel';

export interface AcpCartCall {
  op: AcpCartOperation;
  id?: string;
  body: unknown;
}

const PROBLEM_CODES = { missing: 'missing_field', unknown: 'unknown_field', invalid: 'invalid_field' } as const;

/** Whether a checkout create converts a cart (`cart_id` present): answered by `checkout` below, not the usual create. */
export function isCartCheckout(body: unknown): boolean {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && 'cart_id' in body;
}

function validated<Name extends 'acp.cart.create' | 'acp.cart.update' | 'acp.cart.cancel' | 'acp.cart.checkout'>(
  deps: Deps,
  name: Name,
  body: unknown,
) {
  const checked = checkRequest(deps.validators, name, body);
  if (checked.problem) {
    const { kind, message, path } = checked.problem;
    throw new ProtocolError(400, PROBLEM_CODES[kind], message, { param: path });
  }
  return checked.request;
}

function rejected(problems: LineProblem[]): ProtocolError {
  const [first] = problems;
  return new ProtocolError(400, LINE_ERROR_CODES[first!.code], first!.content, { param: first!.path });
}

export function createAcpCartOperations(deps: Deps) {
  const rendering = {
    namespace: deps.config.protocols.namespace!,
    baseUrl: deps.config.baseUrl,
    psp: deps.config.protocols.paymentPsp,
    links: acpLinks(deps),
  };
  const cartAnswer = (status: number, outcome: acpCarts.AcpCartOutcome, id?: string): ProtocolResponse => {
    if (outcome.kind === 'not_found')
      throw new ProtocolError(404, 'cart_not_found', `No cart ${id} belongs to this client.`, { param: '$.id' });
    if (outcome.kind === 'rejected') throw rejected(outcome.problems);
    return jsonResponse(status, toAcpCart(outcome.session, rendering));
  };

  /** A cart operation's body checked, into what runs in the transaction. */
  function cart(clientId: string, call: AcpCartCall): (db: Db) => Promise<ProtocolResponse> {
    const { op, id } = call;
    if (op === 'retrieve') return async (db) => cartAnswer(200, await acpCarts.getAcpCart(deps, db, clientId, id!), id);
    if (op === 'cancel') {
      validated(deps, 'acp.cart.cancel', call.body);
      return async (db) => cartAnswer(200, await acpCarts.cancelAcpCart(deps, db, clientId, id!), id);
    }
    const input = validated(deps, op === 'create' ? 'acp.cart.create' : 'acp.cart.update', call.body);
    const contents = { lines: requestedLines(input.line_items), buyer: buyerOf(input.buyer) ?? undefined };
    if (op === 'create')
      return async (db) => cartAnswer(201, await acpCarts.createAcpCart(deps, db, clientId, contents));
    return async (db) => cartAnswer(200, await acpCarts.updateAcpCart(deps, db, clientId, id!, contents), id);
  }

  /** POST /checkout_sessions with `cart_id`: the cart becomes the session with its id (201, also when it already had). */
  function checkout(clientId: string, body: unknown): (db: Db) => Promise<ProtocolResponse> {
    const input = validated(deps, 'acp.cart.checkout', body);
    return async (db) => {
      const outcome = await acpCarts.checkOutAcpCart(deps, db, clientId, input.cart_id, input.currency!);
      switch (outcome.kind) {
        case 'not_found':
          throw new ProtocolError(
            404,
            'cart_not_found',
            `No open cart ${input.cart_id} belongs to this client (a cancelled or paid one is gone).`,
            { param: '$.cart_id' },
          );
        case 'empty':
          throw new ProtocolError(400, 'cart_empty', `Cart ${input.cart_id} has no line items.`, {
            param: '$.cart_id',
          });
        case 'currency_mismatch':
          throw new ProtocolError(
            400,
            'currency_mismatch',
            `Cart ${input.cart_id} is priced in ${outcome.currency}; create its checkout session in that currency.`,
            { param: '$.currency' },
          );
        case 'rejected':
          throw rejected(outcome.problems);
        case 'session':
          return jsonResponse(201, toAcpCheckoutSession(outcome.session, rendering));
      }
    };
  }

  return { cart, checkout };
}
