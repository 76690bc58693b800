// The ACP checkout operations (B.3–B.7 of the design), run after the binding's authentication, version and
// idempotency steps (src/http/acp.ts): each checks its body first, outside any transaction, then runs inside the
// transaction that records its answer. Protocol errors are ProtocolErrors, rendered by the binding as ACP's flat Error.
import type { Db } from '../../db/knex.js';
import type { Deps } from '../../deps.js';
import { acpDestinationInput, acpMessage, toAcpCheckoutSession, type AcpMessage } from '../../domain/acp-checkout.js';
import { withAddressProblems, type BuyerDetails, type ProtocolSession } from '../../domain/protocol-session.js';
import type { ShippingCode } from '../../domain/fulfilment.js';
import { acpOrigin } from '../../domain/order-events.js';
import { jsonResponse, ProtocolError } from '../../http/protocol-io.js';
import { checkRequest, type AcpLineRequest, type AcpSessionRequest } from '../../protocols/requests.js';
import type { ValidatorRegistry } from '../../validators.js';
import type { ProtocolResponse } from '../../protocols/answers.js';
import type { CreatePlan } from '../../services/checkout/create.js';
import * as sessions from '../../services/protocol-sessions.js';

export type AcpOperation = 'create' | 'retrieve' | 'update' | 'complete' | 'cancel';

export interface AcpCall {
  op: AcpOperation;
  id?: string;
  body: unknown;
}

const PROBLEM_CODES = { missing: 'missing_field', unknown: 'unknown_field', invalid: 'invalid_field' } as const;

/** The ACP Error codes of the line problems (B.6), and the MessageError codes of an update's (B.7). */
export const LINE_ERROR_CODES: Record<sessions.LineProblemCode, string> = {
  not_found: 'item_not_found',
  item_unavailable: 'region_restricted',
  out_of_stock: 'out_of_stock',
  quantity_exceeded: 'quantity_exceeded',
};
const LINE_MESSAGE_CODES: Record<sessions.LineProblemCode, string> = {
  not_found: 'not_found',
  item_unavailable: 'region_restricted',
  out_of_stock: 'out_of_stock',
  quantity_exceeded: 'quantity_exceeded',
};

export function acpLinks(deps: Deps) {
  const { baseUrl, protocols } = deps.config;
  return [
    { type: 'return_policy', url: `${baseUrl}/policies/returns`, title: 'Returns' },
    { type: 'shipping_policy', url: `${baseUrl}/policies/shipping`, title: 'Shipping' },
    ...(protocols.termsUrl ? [{ type: 'terms_of_use', url: protocols.termsUrl, title: 'Terms of use' }] : []),
    ...(protocols.privacyUrl ? [{ type: 'privacy_policy', url: protocols.privacyUrl, title: 'Privacy policy' }] : []),
  ];
}

function validated<Name extends 'acp.create' | 'acp.update' | 'acp.complete' | 'acp.cancel'>(
  validators: ValidatorRegistry,
  name: Name,
  body: unknown,
) {
  const checked = checkRequest(validators, name, body);
  if (checked.problem) {
    const { kind, message, path } = checked.problem;
    throw new ProtocolError(400, PROBLEM_CODES[kind], message, { param: path });
  }
  return checked.request;
}

function validatedSession(
  validators: ValidatorRegistry,
  name: 'acp.create' | 'acp.update',
  body: unknown,
): AcpSessionRequest {
  const input = validated(validators, name, body);
  if (input.discounts && input.coupons) {
    throw new ProtocolError(400, 'conflicting_fields', 'Send discounts.codes or the deprecated coupons, not both.', {
      param: '$.coupons',
    });
  }
  return input;
}

export function requestedLines(lines: AcpLineRequest[]): sessions.RequestedProtocolLine[] {
  return lines.map((line, index) => {
    const byItem = 'item' in line;
    return {
      itemId: byItem ? line.item.id : line.id,
      quantity: line.quantity ?? 1,
      idPath: byItem ? `$.line_items[${index}].item.id` : `$.line_items[${index}].id`,
      quantityPath: `$.line_items[${index}].quantity`,
    };
  });
}

/** Email, names and phone are kept (B.4); the other Buyer fields are accepted and dropped. */
export function buyerOf(buyer: AcpSessionRequest['buyer']): BuyerDetails | null {
  if (!buyer) return null;
  const { email, first_name, last_name, phone_number } = buyer;
  return Object.fromEntries(
    Object.entries({ email, first_name, last_name, phone_number }).filter(([, value]) => value !== undefined),
  );
}

function codesOf(input: AcpSessionRequest): string[] | undefined {
  return input.discounts ? (input.discounts.codes ?? []) : input.coupons;
}

function optionMessage(index: number, content: string): AcpMessage {
  return acpMessage({
    type: 'error',
    code: 'invalid',
    severity: 'high',
    resolution: 'recoverable',
    param: `$.selected_fulfillment_options[${index}]`,
    content,
  });
}

/**
 * The shipping option an update selects (every line ships with one option: each entry names `shipping`, the same
 * option, and lines of this session), or the message at the first entry that does not; which options the destination
 * offers is the update's to check.
 */
function selectedOption(
  input: AcpSessionRequest,
  session: ProtocolSession,
): { code?: string; index?: number; problem?: AcpMessage } {
  const selected = input.selected_fulfillment_options ?? [];
  const lineIds = new Set(session.lines.map((line) => line.id));
  const index = selected.findIndex(
    (option) =>
      option.type !== 'shipping' ||
      option.option_id !== selected[0]!.option_id ||
      (option.item_ids ?? []).some((id) => !lineIds.has(id)),
  );
  if (index >= 0)
    return {
      problem: optionMessage(
        index,
        "Every line of this session ships with one shipping option: select one fulfillment_options id of type shipping for this session's lines.",
      ),
    };
  return selected.length ? { code: selected[0]!.option_id, index: 0 } : {};
}

export function createAcpOperations(deps: Deps) {
  const rendering = {
    namespace: deps.config.protocols.namespace!,
    baseUrl: deps.config.baseUrl,
    psp: deps.config.protocols.paymentPsp,
    links: acpLinks(deps),
  };
  const present = (status: number, session: ProtocolSession, extraMessages: AcpMessage[] = []): ProtocolResponse =>
    // `rendering` spread last (it has neither field): Node 20 builds a literal that starts with a spread a property at
    // a time (src/domain/pricing.ts).
    jsonResponse(status, toAcpCheckoutSession(session, { extraMessages, now: new Date(deps.now()), ...rendering }));
  const notFound = (id: string) =>
    new ProtocolError(404, 'session_not_found', `No checkout session with id ${id}.`, { param: '$.id' });
  const notModifiable = (session: ProtocolSession, canceledCode: string) =>
    session.state === 'completed'
      ? new ProtocolError(
          405,
          'session_completed',
          `Checkout session ${session.id} is paid and became an order; it can no longer change.`,
        )
      : new ProtocolError(405, canceledCode, `Checkout session ${session.id} is canceled.`);

  /** The create's plan: what to store, and its answer (run by createProtocolSession in one read and one write). */
  function create(call: AcpCall, clientId?: string): CreatePlan<{ currency: string }> {
    const input = validatedSession(deps.validators, 'acp.create', call.body);
    return {
      input: {
        market: { currency: input.currency! },
        lines: requestedLines(input.line_items!),
        codes: codesOf(input) ?? [],
        buyer: buyerOf(input.buyer),
        fulfillmentDetails: input.fulfillment_details,
        // The client is told of the order through ACP's order webhook (src/services/order-events.ts).
        ...(clientId ? { origin: acpOrigin(clientId) } : {}),
        // The address checked against the currency's region: one the store does not ship to is not priced for, the
        // details kept as sent, and the session not ready for payment, naming the field.
        shipping: { address: acpDestinationInput(input.fulfillment_details) ?? undefined },
      },
      respond(outcome) {
        if (outcome.kind === 'unsupported_currency')
          throw new ProtocolError(
            400,
            'unsupported_currency',
            `This store does not sell in ${input.currency}; use one of ${outcome.currencies.join(', ')}.`,
            { param: '$.currency' },
          );
        if (outcome.kind === 'rejected') {
          const [first] = outcome.problems;
          throw new ProtocolError(400, LINE_ERROR_CODES[first!.code], first!.content, { param: first!.path });
        }
        return present(201, withAddressProblems(outcome.session, outcome.destinationProblems));
      },
    };
  }

  const retrieve =
    (call: AcpCall) =>
    async (db: Db): Promise<ProtocolResponse> => {
      const session = await sessions.loadProtocolSession(deps, db, call.id!);
      if (!session) throw notFound(call.id!);
      return present(200, session);
    };

  function update(call: AcpCall): (db: Db) => Promise<ProtocolResponse> {
    const input = validatedSession(deps.validators, 'acp.update', call.body);
    return async (db) => {
      const current = await sessions.loadProtocolSession(deps, db, call.id!);
      if (!current) throw notFound(call.id!);
      const option = selectedOption(input, current);
      if (option.problem && current.state !== 'canceled' && current.state !== 'completed')
        return present(200, current, [option.problem]);
      const outcome = await sessions.changeProtocolSession(deps, db, call.id!, {
        lines: input.line_items && requestedLines(input.line_items),
        codes: codesOf(input),
        buyer: input.buyer === undefined ? undefined : buyerOf(input.buyer),
        fulfillmentDetails: input.fulfillment_details,
        shipping: {
          // Details replace the session's: without an address, it has none.
          address: input.fulfillment_details === undefined ? undefined : acpDestinationInput(input.fulfillment_details),
          // Any id: offeredOnly refuses one the destination does not offer before anything is written.
          option: option.code as ShippingCode | undefined,
          offeredOnly: true,
        },
      });
      if (outcome.kind === 'not_found') throw notFound(call.id!);
      if (outcome.kind === 'not_modifiable') throw notModifiable(outcome.session, 'session_canceled');
      // The address's problems are the session's own messages (acpAddressMessages), its status not_ready_for_payment.
      if (outcome.kind === 'invalid_destination')
        return present(200, withAddressProblems(outcome.session, outcome.problems));
      if (outcome.kind === 'option_rejected')
        return present(200, outcome.session, [
          optionMessage(
            option.index!,
            `This session's destination offers the shipping options ${outcome.offered.map((code) => `"${code}"`).join(', ')}; "${option.code}" is not one of them.`,
          ),
        ]);
      if (outcome.kind === 'rejected') {
        const errors = outcome.problems.map((problem) =>
          acpMessage({
            type: 'error',
            code: LINE_MESSAGE_CODES[problem.code],
            severity: 'high',
            resolution: 'recoverable',
            param: problem.path,
            content: problem.content,
          }),
        );
        return present(200, outcome.session, errors);
      }
      return present(200, outcome.session);
    };
  }

  /** Completion never takes payment here (B.9 #4): 422 on an open session, which stays requires_escalation. */
  function complete(call: AcpCall): (db: Db) => Promise<ProtocolResponse> {
    validated(deps.validators, 'acp.complete', call.body);
    return async (db) => {
      const session = await sessions.loadProtocolSession(deps, db, call.id!);
      if (!session) throw notFound(call.id!);
      if (session.state === 'canceled' || session.state === 'completed')
        throw notModifiable(session, 'session_canceled');
      throw new ProtocolError(
        422,
        'delegated_payment_not_supported',
        "This store does not accept payment through the API. Send the buyer to the session's continue_url to pay.",
        {
          param: '$.payment_data',
        },
      );
    };
  }

  function cancel(call: AcpCall): (db: Db) => Promise<ProtocolResponse> {
    validated(deps.validators, 'acp.cancel', call.body);
    return async (db) => {
      const outcome = await sessions.cancelProtocolSession(deps, db, call.id!);
      if (outcome.kind === 'not_found') throw notFound(call.id!);
      if (outcome.kind === 'not_modifiable') throw notModifiable(outcome.session, 'session_already_canceled');
      return present(200, outcome.session);
    };
  }

  /** Each operation's body checked (throwing its ProtocolError), into what runs in the transaction. */
  const operations: Record<
    Exclude<AcpOperation, 'create'>,
    (call: AcpCall) => (db: Db) => Promise<ProtocolResponse>
  > = {
    retrieve,
    update,
    complete,
    cancel,
  };
  return { create, operations };
}
