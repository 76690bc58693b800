// The checkout MCP server: create, read and cancel checkout sessions through the same service as the REST API, so
// a session here is the session REST returns. No tool completes a payment: a human pays at checkout_url.
import type { components } from '../../codegen/types.js';
import type { Deps } from '../deps.js';
import { keyRefusalError } from '../domain/idempotency.js';
import { currentVersion } from '../domain/versioning.js';
import {
  cancelCheckoutSession,
  getCheckoutSession,
  updateCheckoutSession,
  type CheckoutSession,
} from '../services/checkout.js';
import { createCheckoutSession, createCheckoutSessionIdempotently } from '../services/checkout/create.js';
import { createMcpServer, type McpServer } from './rpc.js';
import type { ContractSchemas, ObjectSchema } from './schemas.js';
import { defineTool, type Tool } from './tools.js';

type CreateRequest = components['schemas']['CheckoutSessionCreateRequest'];
type SessionId = components['parameters']['CheckoutSessionId'];
type UpdateRequest = components['schemas']['CheckoutSessionUpdateRequest'];

const INSTRUCTIONS =
  'Builds priced checkout sessions for the storefront (find variant ids with the catalog MCP server, /catalog/mcp). ' +
  'Amounts are major units. Creating, reading or cancelling a session charges nothing and reserves nothing. ' +
  'Payment is a human hand-off: give the shopper payment_provider.checkout_url; only a human paying there turns a session into an order.';

function sessionIdInput(contract: ContractSchemas): ObjectSchema<{ id: SessionId }> {
  return {
    type: 'object',
    properties: {
      id: contract.parameter(
        'CheckoutSessionId',
        'The checkout session id returned by create_checkout_session (prefix cart_).',
      ),
    },
    required: ['id'],
    additionalProperties: false,
  };
}

/** The REST request body, plus the Idempotency-Key header as an argument. */
function createInput(contract: ContractSchemas): ObjectSchema<CreateRequest & { idempotency_key?: string }> {
  const body = contract.schema('CheckoutSessionCreateRequest');
  return {
    ...body,
    properties: {
      ...body.properties,
      idempotency_key: contract.parameter(
        'IdempotencyKey',
        'Makes a retry safe: the same key and arguments give the same session (kept 24 h), as the REST Idempotency-Key header.',
      ),
    },
  };
}

/** The REST update body, plus the session id. */
function updateInput(contract: ContractSchemas): ObjectSchema<UpdateRequest & { id: SessionId }> {
  const body = contract.schema('CheckoutSessionUpdateRequest');
  return {
    ...body,
    properties: { id: sessionIdInput(contract).properties!.id!, ...body.properties },
    required: ['id'],
    minProperties: 2,
  } as ObjectSchema<UpdateRequest & { id: SessionId }>;
}

/** What to do about a bad argument, in terms of the MCP tools. */
const ADVICE = {
  items: 'Find variant ids with search_products on the catalog MCP server (/catalog/mcp).',
  region_id: 'Use an id from list_regions on the catalog MCP server, or omit region_id for the United States (USD).',
  id: 'Use the id create_checkout_session returned.',
  shipping_address:
    "Send the buyer's full postal address: recipient_name, line1, city, country (ISO 3166-1 alpha-2), region (state or province: required in the US and Canada) and postal_code, in a country of the session's region.",
  shipping_option: 'Choose standard or express (see shipping_options in the session).',
};

/** Says in plain words what the agent must do next: hand the payment link to a human, or nothing for a cancelled session. */
function nextStep(session: CheckoutSession): string[] {
  if (session.order) {
    return [
      `Paid: a human paid at checkout_url and this session became order ${session.order.order_number} (status ${session.order.status}); ` +
        `the totals are the amounts charged. The buyer's receipt is at ${session.order.permalink_url}. Nothing more to do.`,
    ];
  }
  if (session.status === 'canceled') {
    return [
      'This session is canceled: nothing was charged, and it can no longer be paid. Create a new session to buy.',
    ];
  }
  return [
    `Nothing has been charged. To buy, a human must open ${session.payment_provider.checkout_url} and pay there; ` +
      'no tool can complete or charge the payment. Share that link with the shopper.',
  ];
}

function checkoutTools(deps: Deps, contract: ContractSchemas): Tool[] {
  const sessionId = sessionIdInput(contract);
  const session = contract.schema('CheckoutSession');
  return [
    defineTool(
      {
        name: 'create_checkout_session',
        title: 'Create a checkout session',
        description:
          'Prices a cart and returns it as a checkout session: line items, totals (subtotal, discount, shipping, tax, total) and payment_provider.checkout_url, where a human pays. ' +
          'Arguments: items (each with exactly one of id, variant_id, handle or sku, and a quantity 1 to 100, default 1), ' +
          'optional promo_codes (codes that do not apply are reported in messages), region_id and buyer.email. Charges nothing. ' +
          "Optional shipping_address (the buyer's postal address, in a country of the region) and shipping_option (standard or express) price the session for where it goes: tax by jurisdiction in tax_lines, the options offered in shipping_options; without an address the totals are an estimate (totals_estimated: true). " +
          'Pass idempotency_key (any unique string, e.g. a UUID) to make a retry safe, as the REST Idempotency-Key header: the same key with the same arguments returns the same session; with other arguments it is refused. ' +
          'A transient failure (nothing stored) is an error result that says how many seconds to wait before retrying.',
        annotations: {
          title: 'Create a checkout session',
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: false,
        },
        inputSchema: createInput(contract),
        outputSchema: session,
        advice: ADVICE,
        headerArguments: { 'Idempotency-Key': 'idempotency_key' },
        notes: nextStep,
        run: async ({ idempotency_key: key, ...input }) => {
          if (!key) return createCheckoutSession(deps, input);
          const created = await createCheckoutSessionIdempotently(deps, input, key, currentVersion());
          if (created.kind !== 'created') throw keyRefusalError(created);
          return created.session;
        },
      },
      deps.validators,
    ),
    defineTool(
      {
        name: 'get_checkout_session',
        title: 'Get a checkout session',
        description:
          'Returns a checkout session by id, re-priced now (current prices and promotions), with its status and payment_provider.checkout_url. ' +
          'Once a human has paid, status is completed and order gives the order id, number, status and receipt URL; the totals are then the amounts charged.',
        annotations: {
          title: 'Get a checkout session',
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
        inputSchema: sessionId,
        outputSchema: session,
        lookupArgument: 'id',
        notes: nextStep,
        advice: ADVICE,
        run: (args) => getCheckoutSession(deps, args.id),
      },
      deps.validators,
    ),
    defineTool(
      {
        name: 'update_checkout_session',
        title: 'Set the destination and shipping option of a checkout session',
        description:
          'Sets or changes where a checkout session ships (shipping_address: recipient_name, line1, optional line2, city, region, postal_code, country) and how (shipping_option: standard or express), and returns the session re-priced: tax by jurisdiction in tax_lines, the options offered with their prices and delivery windows in shipping_options, totals_estimated false. ' +
          'shipping_address null removes the address. An address the store does not ship to is an error naming the field (shipping_address.region, say), and the session is left as it was. The same arguments again return the same session. Charges nothing.',
        annotations: {
          title: 'Set the destination and shipping option of a checkout session',
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
        inputSchema: updateInput(contract),
        outputSchema: session,
        lookupArgument: 'id',
        notes: nextStep,
        advice: ADVICE,
        run: ({ id, ...update }) => updateCheckoutSession(deps, id, update),
      },
      deps.validators,
    ),
    defineTool(
      {
        name: 'cancel_checkout_session',
        title: 'Cancel a checkout session',
        description:
          'Cancels a checkout session and abandons its cart. Permanent: a canceled session can never be paid. Nothing was charged. Cancelling again returns the same canceled session.',
        annotations: {
          title: 'Cancel a checkout session',
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: true,
          openWorldHint: false,
        },
        inputSchema: sessionId,
        outputSchema: session,
        lookupArgument: 'id',
        notes: nextStep,
        advice: ADVICE,
        run: (args) => cancelCheckoutSession(deps, args.id),
      },
      deps.validators,
    ),
  ];
}

export function createCheckoutServer(deps: Deps, contract: ContractSchemas): McpServer {
  return createMcpServer({
    name: 'storefront-checkout',
    title: 'Storefront checkout',
    version: '1.0.0',
    instructions: INSTRUCTIONS,
    tools: checkoutTools(deps, contract),
  });
}
