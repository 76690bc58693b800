// UCP's catalog and cart operations (search_catalog, lookup_catalog, get_product; create_cart, get_cart, update_cart,
// cancel_cart) and the checkout create that converts a cart (`cart_id`), run by the same executor as the checkout
// (src/http/ucp.ts createUcpExecutor) after the same header, profile and idempotency steps, on REST and /ucp/mcp alike.
// Each checks its body first (a ProtocolError, 400 invalid_request); business outcomes are 200/201 bodies valid against
// the operation's response schema of the negotiated version.
import type { Db } from '../../db/knex.js';
import type { Deps } from '../../deps.js';
import type { ProtocolSession } from '../../domain/protocol-session.js';
import { toUcpCheckout, ucpErrorResponse, ucpMessage, type UcpMessage } from '../../domain/ucp-checkout.js';
import {
  toUcpCart,
  toUcpDetailProduct,
  ucpShoppingEnvelope,
  UCP_SHOPPING_OPERATIONS,
  type UcpShoppingOperation,
} from '../../domain/ucp-shopping.js';
import { jsonResponse, ProtocolError } from '../../http/protocol-io.js';
import type { ProtocolResponse } from '../../protocols/answers.js';
import { checkRequest, type RequestSchemaName } from '../../protocols/requests.js';
import type { CreatePlan } from '../../services/checkout/create.js';
import { findUcpProduct, lookupUcpCatalog, searchUcpCatalog } from '../../services/ucp-catalog.js';
import { cancelUcpCart, changeUcpCart, convertUcpCart, loadUcpCart } from '../../services/ucp-carts.js';
import type { UcpCall } from './checkout.js';
import {
  buyerOf,
  discountCodes,
  problemMessages,
  requestedLines,
  ucpLinks,
  ucpNamespace,
  unitMessages,
} from './checkout.js';

/** The cart operations but create, and the catalog's: each checked, into what runs in the transaction. */
export type UcpShoppingPrepared = Exclude<UcpShoppingOperation, 'create_cart'>;

function validated<Name extends RequestSchemaName>(deps: Deps, name: Name, body: unknown) {
  const checked = checkRequest(deps.validators, name, body);
  if (checked.problem)
    throw new ProtocolError(400, 'invalid_request', checked.problem.message, { param: checked.problem.path });
  return checked.request;
}

const CURSOR_PREFIX = 'o';

/** An opaque page cursor: the offset of the page's first product. */
function cursorOf(offset: number): string {
  return Buffer.from(`${CURSOR_PREFIX}${offset}`).toString('base64url');
}

function offsetOf(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const decoded = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const match = /^o(\d{1,6})$/.exec(decoded);
  if (!match)
    throw new ProtocolError(400, 'invalid_request', '$.pagination.cursor is not a cursor this business gave.', {
      param: '$.pagination.cursor',
    });
  return Number(match[1]);
}

export function createUcpShoppingOperations(deps: Deps) {
  const { baseUrl } = deps.config;
  const links = ucpLinks(deps);
  const version = (call: UcpCall) => call.negotiated.version;
  const errorResponse = (messages: UcpMessage[], call: UcpCall, status = 200): ProtocolResponse =>
    jsonResponse(status, ucpErrorResponse(messages, baseUrl, version(call)));
  const cartAnswer = (status: number, cart: ProtocolSession, call: UcpCall, messages: UcpMessage[] = []) =>
    jsonResponse(
      status,
      toUcpCart(cart, {
        version: version(call),
        links,
        messages: [...messages, ...call.notes],
        discountNegotiated: call.negotiated.cartDiscount,
      }),
    );
  const cartNotFound = (id: string, call: UcpCall) =>
    errorResponse(
      [
        ucpMessage({
          type: 'error',
          code: 'not_found',
          severity: 'unrecoverable',
          content: `No cart with id ${id} (a cart converted into a checkout is that checkout now; a cancelled one is gone).`,
        }),
      ],
      call,
    );
  const cartRequest = (call: UcpCall) =>
    validated(deps, version(call) === '2026-08-25' ? 'ucp@2026-08-25.create' : 'ucp.create', call.body);

  /** create_cart: an open cart of no client, created and priced as a checkout is (one read, one write). */
  function createCart(call: UcpCall): CreatePlan<{ country: string | undefined }> | { refused: ProtocolResponse } {
    const input = cartRequest(call);
    const units = unitMessages(input, version(call));
    if (units.length) return { refused: errorResponse(units, call) };
    const country = input.context?.address_country;
    const discounts = discountCodes(input, call.negotiated.cartDiscount);
    return {
      input: {
        owner: { status: 'open', client_id: null },
        market: { country },
        lines: requestedLines(input),
        codes: discounts.codes ?? [],
        buyer: buyerOf(input),
      },
      respond(outcome) {
        if (outcome.kind === 'rejected') return errorResponse(problemMessages(outcome.problems, 'unrecoverable'), call);
        const notes = [
          ...discounts.notes,
          ...(country && !outcome.countryServed
            ? [
                ucpMessage({
                  type: 'info',
                  code: 'market_defaulted',
                  path: '$.context.address_country',
                  content: `This store does not sell to ${country}; prices are in the default market.`,
                }),
              ]
            : []),
        ];
        return cartAnswer(201, outcome.session, call, notes);
      },
    };
  }

  const getCart = (call: UcpCall) => async (db: Db) => {
    const cart = await loadUcpCart(deps, db, call.id!);
    return cart ? cartAnswer(200, cart, call) : cartNotFound(call.id!, call);
  };

  function updateCart(call: UcpCall) {
    const input = cartRequest(call);
    const units = unitMessages(input, version(call));
    const discounts = discountCodes(input, call.negotiated.cartDiscount);
    return async (db: Db) => {
      if (units.length) {
        // Nothing changes: the cart as it is, with what to fix.
        const cart = await loadUcpCart(deps, db, call.id!);
        return cart ? cartAnswer(200, cart, call, units) : cartNotFound(call.id!, call);
      }
      // PUT replaces the cart: absent buyer (and codes, when discount is negotiated) are cleared.
      const outcome = await changeUcpCart(deps, db, call.id!, {
        lines: requestedLines(input),
        buyer: buyerOf(input),
        codes: discounts.codes,
      });
      if (outcome.kind === 'not_found') return cartNotFound(call.id!, call);
      if (outcome.kind === 'rejected')
        return cartAnswer(200, outcome.cart, call, [
          ...problemMessages(outcome.problems, 'recoverable'),
          ...discounts.notes,
        ]);
      return cartAnswer(200, outcome.cart, call, discounts.notes);
    };
  }

  const cancelCart = (call: UcpCall) => async (db: Db) => {
    const cart = await cancelUcpCart(deps, db, call.id!);
    return cart ? cartAnswer(200, cart, call) : cartNotFound(call.id!, call);
  };

  function searchCatalog(call: UcpCall) {
    const input = validated(deps, 'ucp.catalog_search', call.body);
    const offset = offsetOf(input.pagination?.cursor);
    return async (db: Db) => {
      const found = await searchUcpCatalog(db, {
        query: input.query,
        context: input.context,
        filters: input.filters,
        offset,
        limit: input.pagination?.limit,
      });
      const messages = [...found.notes, ...call.notes];
      return jsonResponse(200, {
        ucp: ucpShoppingEnvelope(version(call), UCP_SHOPPING_OPERATIONS.search_catalog.name),
        products: found.products,
        pagination: {
          has_next_page: found.next !== undefined,
          ...(found.next !== undefined ? { cursor: cursorOf(found.next) } : {}),
          total_count: found.total,
        },
        ...(messages.length ? { messages } : {}),
      });
    };
  }

  function lookupCatalog(call: UcpCall) {
    const input = validated(deps, 'ucp.catalog_lookup', call.body);
    return async (db: Db) => {
      const found = await lookupUcpCatalog(db, input);
      const messages = [...found.notes, ...call.notes];
      return jsonResponse(200, {
        ucp: ucpShoppingEnvelope(version(call), UCP_SHOPPING_OPERATIONS.lookup_catalog.name),
        products: found.products,
        ...(messages.length ? { messages } : {}),
      });
    };
  }

  function getProduct(call: UcpCall) {
    const input = validated(deps, 'ucp.get_product', call.body);
    return async (db: Db) => {
      const found = await findUcpProduct(db, input);
      if (found.kind !== 'found') {
        const unknown = found.kind === 'not_found';
        const error = ucpMessage({
          type: 'error',
          code: found.kind,
          // An unknown id stays unknown; a filter can be loosened.
          severity: unknown ? 'unrecoverable' : 'recoverable',
          path: unknown ? '$.id' : '$.filters',
          content: unknown
            ? `No product or variant is sold here as ${input.id}.`
            : `${input.id} is sold here, but none of its variants is within the filters asked.`,
        });
        return errorResponse([error, ...(unknown ? [] : [...found.notes, ...call.notes])], call);
      }
      const messages = [...found.notes, ...call.notes];
      return jsonResponse(200, {
        ucp: ucpShoppingEnvelope(version(call), UCP_SHOPPING_OPERATIONS.get_product.name),
        product: toUcpDetailProduct(found.product, found.variantId),
        ...(messages.length ? { messages } : {}),
      });
    };
  }

  /**
   * A checkout create naming `cart_id` (the cart capability negotiated): the cart becomes the checkout with its id,
   * its lines, market and buyer (the body's overlapping fields ignored), with the body's discount codes when the
   * discount capability is negotiated.
   */
  function convertCart(call: UcpCall) {
    const input = validated(deps, 'ucp.cart_conversion', call.body);
    // Discount negotiated, the body's codes (when it sends `discounts`) replace the cart's, else the cart's carry over;
    // not negotiated, the checkout has none.
    const codes = call.negotiated.discount ? input.discounts?.codes : [];
    return async (db: Db): Promise<ProtocolResponse> => {
      const outcome = await convertUcpCart(deps, db, input.cart_id, codes);
      if (outcome.kind === 'not_found')
        return errorResponse(
          [
            ucpMessage({
              type: 'error',
              code: 'not_found',
              severity: 'unrecoverable',
              path: '$.cart_id',
              content: `No cart with id ${input.cart_id} to convert (a converted cart is its checkout already).`,
            }),
          ],
          call,
        );
      if (outcome.kind === 'rejected') return errorResponse(problemMessages(outcome.problems, 'unrecoverable'), call);
      return jsonResponse(
        201,
        toUcpCheckout(outcome.session, {
          baseUrl,
          links,
          version: version(call),
          namespace: ucpNamespace(deps, version(call)),
          discountNegotiated: call.negotiated.discount,
          fulfillmentNegotiated: call.negotiated.fulfillment,
          extraMessages: call.notes,
        }),
      );
    };
  }

  /** The 200 answer when the platform profile does not declare the operation's capability. */
  function incompatible(op: UcpShoppingOperation, call: UcpCall): ProtocolResponse {
    const { name } = UCP_SHOPPING_OPERATIONS[op];
    const message = ucpMessage({
      type: 'error',
      code: 'capabilities_incompatible',
      severity: 'unrecoverable',
      content: `This business offers ${name} ${version(call)} over rest and mcp; the platform profile does not (declare the capability at ucp.version, and a dev.ucp.shopping service at that version with transport rest or mcp).`,
    });
    // The catalog answers have no error_response: an empty, failed answer of their own shape.
    if (op === 'search_catalog' || op === 'lookup_catalog')
      return jsonResponse(200, {
        ucp: ucpShoppingEnvelope(version(call), name, 'error'),
        products: [],
        messages: [message],
      });
    return jsonResponse(200, ucpErrorResponse([message], baseUrl, version(call), { emptyCapabilities: true }));
  }

  const operations: Record<UcpShoppingPrepared, (call: UcpCall) => (db: Db) => Promise<ProtocolResponse>> = {
    search_catalog: searchCatalog,
    lookup_catalog: lookupCatalog,
    get_product: getProduct,
    get_cart: getCart,
    update_cart: updateCart,
    cancel_cart: cancelCart,
  };
  return { createCart, operations, convertCart, incompatible };
}
