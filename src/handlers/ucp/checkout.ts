// The UCP checkout operations (A.3–A.7 of the design), run after the binding's header, profile and idempotency steps
// (src/http/ucp.ts): each checks its body first, outside any transaction, then runs inside the transaction that
// records its answer. Business outcomes are 200/201 bodies (a checkout, or UCP's error_response); protocol errors are
// ApiErrors, rendered by the binding.
import type { Db } from '../../db/knex.js';
import type { Deps } from '../../deps.js';
import type { BuyerDetails, ProtocolSession } from '../../domain/protocol-session.js';
import {
  countryCodeOf,
  type DestinationField,
  type DestinationInput,
  type DestinationProblem,
} from '../../domain/destination.js';
import type { ShippingCode } from '../../domain/fulfilment.js';
import {
  EACH_UNIT,
  isEachUnit,
  toUcpCheckout,
  UCP_DESTINATION_ID,
  ucpErrorResponse,
  ucpMessage,
  type UcpLink,
  type UcpMessage,
  type UcpVersion,
} from '../../domain/ucp-checkout.js';
import type { UcpShoppingOperation } from '../../domain/ucp-shopping.js';
import { jsonResponse, ProtocolError } from '../../http/protocol-io.js';
import { checkRequest, type UcpCheckoutRequest, type UcpDestinationRequest } from '../../protocols/requests.js';
import type { ValidatorRegistry } from '../../validators.js';
import type { ProtocolResponse } from '../../protocols/answers.js';
import type { UcpErrorBody } from '../../http/protocol-errors.js';
import type { CreatePlan } from '../../services/checkout/create.js';
import * as sessions from '../../services/protocol-sessions.js';
import type { Negotiated } from '../../services/ucp-profiles.js';
import { ucpOrigin } from '../../services/order-events.js';

export type UcpOperation = 'create' | 'get' | 'update' | 'complete' | 'cancel';

/**
 * One UCP operation after its transport's own checks (REST headers, MCP arguments): steps 6–12 of A.3, run by the
 * executor (src/http/ucp.ts createUcpExecutor).
 */
export interface UcpExecution {
  profileUrl: string;
  /** The client's address, charged for a profile fetch its request causes. */
  address: string;
  op: UcpOperation | UcpShoppingOperation;
  id?: string;
  body: unknown;
  /**
   * The idempotency key and scope, when the request carries a key; `hashed` is what the request hash covers (as RFC
   * 8785 JSON), `raw` the body's exact bytes, which a 2026-08-25 request's hash covers instead (REST only).
   */
  idempotency?: { key: string; scope: string; hashed: unknown; raw?: Buffer };
}

export type { UcpErrorBody } from '../../http/protocol-errors.js';

/**
 * The answer as sent and stored; `failure` is the protocol error body it renders, when it was answered now (a replay
 * has only its stored bytes), so that a binding other than REST can answer it in its own terms without reading it back.
 */
export type UcpAnswer = { response: ProtocolResponse; replayed: boolean; failure?: UcpErrorBody };

export interface UcpCall {
  op: UcpOperation | UcpShoppingOperation;
  id?: string;
  body: unknown;
  negotiated: Negotiated;
  /** The platform's profile (a session it creates is told of its order there: src/services/order-events.ts). */
  profileUrl?: string;
  /** Info messages of this request (the lenient policy's `profile_not_negotiated`). */
  notes: UcpMessage[];
}

/** The payment handler's namespace in a version's reverse-DNS grammar (2026-08-25 allows hyphens). */
export function ucpNamespace(deps: Deps, version: UcpVersion): string {
  const { namespace, namespace20260825 } = deps.config.protocols;
  return (version === '2026-08-25' ? namespace20260825 : namespace) ?? namespace!;
}

export function ucpLinks(deps: Deps): UcpLink[] {
  const { baseUrl, protocols } = deps.config;
  return [
    { type: 'refund_policy', url: `${baseUrl}/policies/returns`, title: 'Returns' },
    { type: 'shipping_policy', url: `${baseUrl}/policies/shipping`, title: 'Shipping' },
    ...(protocols.termsUrl ? [{ type: 'terms_of_service', url: protocols.termsUrl, title: 'Terms of service' }] : []),
    ...(protocols.privacyUrl ? [{ type: 'privacy_policy', url: protocols.privacyUrl, title: 'Privacy policy' }] : []),
  ];
}

type UcpRequestName = 'ucp.create' | 'ucp.update' | 'ucp.complete' | 'ucp@2026-08-25.create' | 'ucp@2026-08-25.update';

function validated<Name extends UcpRequestName>(validators: ValidatorRegistry, name: Name, body: unknown) {
  const checked = checkRequest(validators, name, body);
  if (checked.problem)
    throw new ProtocolError(400, 'invalid_request', checked.problem.message, { param: checked.problem.path });
  return checked.request;
}

const BUYER_FIELDS = ['email', 'first_name', 'last_name', 'phone_number'] as const;

export function buyerOf(input: UcpCheckoutRequest): BuyerDetails | null {
  const buyer = Object.fromEntries(
    BUYER_FIELDS.flatMap((field) => (input.buyer?.[field] === undefined ? [] : [[field, input.buyer[field]]])),
  );
  return Object.keys(buyer).length ? buyer : null;
}

export function requestedLines(input: UcpCheckoutRequest): sessions.RequestedProtocolLine[] {
  return input.line_items.map((line, index) => ({
    itemId: line.item.id,
    quantity: line.quantity,
    lineId: line.id,
    idPath: `$.line_items[${index}].item.id`,
    quantityPath: `$.line_items[${index}].quantity`,
  }));
}

/**
 * The codes a checkout or cart request sets (only when discount is negotiated for it), and the warning for codes sent
 * without it.
 */
export function discountCodes(
  input: UcpCheckoutRequest,
  negotiated: boolean,
): { codes?: string[]; notes: UcpMessage[] } {
  if (negotiated) return { codes: input.discounts?.codes ?? [], notes: [] };
  if (input.discounts === undefined) return { notes: [] };
  return {
    notes: [
      ucpMessage({
        type: 'warning',
        code: 'discount_not_negotiated',
        path: '$.discounts',
        content: 'Discount codes were ignored: the platform profile does not declare dev.ucp.shopping.discount.',
      }),
    ],
  };
}

/** The shipping options a group offers, by id (every region offers both). */
const OPTION_IDS: readonly ShippingCode[] = ['standard', 'express'];

/** Each field of the domain's address as UCP's postal_address names it. */
const UCP_ADDRESS_FIELDS: Record<DestinationField, keyof UcpDestinationRequest> = {
  recipientName: 'first_name',
  line1: 'street_address',
  line2: 'extended_address',
  city: 'address_locality',
  region: 'address_region',
  postalCode: 'postal_code',
  country: 'address_country',
};

function destinationInput(destination: UcpDestinationRequest): DestinationInput {
  const name = [destination.first_name, destination.last_name].filter((part) => part?.trim()).join(' ');
  return {
    recipientName: name || undefined,
    line1: destination.street_address,
    line2: destination.extended_address,
    city: destination.address_locality,
    region: destination.address_region,
    postalCode: destination.postal_code,
    country: destination.address_country,
  };
}

/** What a request's `fulfillment` asks for, in the session's terms. */
interface ShippingRequest {
  /** The change to make; undefined changes nothing. */
  change?: { address?: DestinationInput | null; option?: ShippingCode | null };
  /** Where the address is in the request (its problems' paths start there). */
  addressPath?: string;
  /** What the request asks that this store cannot do: recoverable errors; nothing is changed. */
  problems: UcpMessage[];
  /** Fulfillment sent without the extension negotiated: ignored, with a warning. */
  notes: UcpMessage[];
}

function fulfillmentProblem(path: string, code: string, content: string): UcpMessage {
  return ucpMessage({ type: 'error', code, severity: 'recoverable', path, content });
}

/**
 * The request's `fulfillment` (only when the extension is negotiated): one shipping method for every line, at most one
 * destination (a new address, or the checkout's own by `selected_destination_id`) and its group's selected option. An
 * update replaces: without `fulfillment`, or without a destination, the address is removed (PUT replaces the checkout).
 */
function shippingRequest(input: UcpCheckoutRequest, call: UcpCall, op: 'create' | 'update'): ShippingRequest {
  const { fulfillment } = input;
  if (!call.negotiated.fulfillment)
    return {
      problems: [],
      notes:
        fulfillment === undefined
          ? []
          : [
              ucpMessage({
                type: 'warning',
                code: 'fulfillment_not_negotiated',
                path: '$.fulfillment',
                content: 'Fulfillment was ignored: the platform profile does not declare dev.ucp.shopping.fulfillment.',
              }),
            ],
    };
  const cleared = op === 'update' ? { address: null, option: null } : undefined;
  const methods = fulfillment?.methods ?? [];
  if (!methods.length) return { change: cleared, problems: [], notes: [] };
  const problems: UcpMessage[] = methods
    .slice(1)
    .map((_, index) =>
      fulfillmentProblem(
        `$.fulfillment.methods[${index + 1}]`,
        'fulfillment_method_unsupported',
        'This store ships every line to one address: send one method of type shipping.',
      ),
    );
  const method = methods[0]!;
  const base = '$.fulfillment.methods[0]';
  if (method.type !== undefined && method.type !== 'shipping')
    problems.push(
      fulfillmentProblem(
        `${base}.type`,
        'fulfillment_method_unsupported',
        `This store offers shipping only, not ${JSON.stringify(method.type.slice(0, 40))}.`,
      ),
    );
  const destinations = method.destinations ?? [];
  const selectedId = method.selected_destination_id ?? undefined;
  const change: NonNullable<ShippingRequest['change']> = {};
  let addressPath: string | undefined;
  const chosen =
    selectedId === undefined
      ? destinations.length === 1
        ? 0
        : -1
      : destinations.findIndex((d) => d.id === selectedId);
  if (chosen >= 0) {
    change.address = destinationInput(destinations[chosen]!);
    addressPath = `${base}.destinations[${chosen}]`;
  } else if (selectedId === UCP_DESTINATION_ID && op === 'update') {
    // The checkout's own destination, as answered: kept.
  } else if (selectedId !== undefined)
    problems.push(
      fulfillmentProblem(
        `${base}.selected_destination_id`,
        'invalid_destination',
        `${selectedId.slice(0, 40)} names none of the destinations sent; send the address in destinations.`,
      ),
    );
  else if (destinations.length > 1)
    problems.push(
      fulfillmentProblem(
        `${base}.selected_destination_id`,
        'invalid_destination',
        'Several destinations were sent: name the one to ship to in selected_destination_id.',
      ),
    );
  else if (op === 'update') change.address = null;
  const groups = method.groups ?? [];
  if (groups.length > 1)
    problems.push(
      fulfillmentProblem(
        `${base}.groups[1]`,
        'invalid_fulfillment_group',
        'Every line ships in one group: select the option in groups[0].',
      ),
    );
  const selectedOption = groups[0]?.selected_option_id ?? undefined;
  if (selectedOption === undefined) {
    if (op === 'update') change.option = null;
  } else if ((OPTION_IDS as readonly string[]).includes(selectedOption)) change.option = selectedOption as ShippingCode;
  else
    problems.push(
      fulfillmentProblem(
        `${base}.groups[0].selected_option_id`,
        'invalid_fulfillment_option',
        `${JSON.stringify(selectedOption.slice(0, 40))} is not an option of this group: choose one of ${OPTION_IDS.join(', ')}.`,
      ),
    );
  return { change, addressPath, problems, notes: [] };
}

/**
 * An address the store does not ship to, as UCP's business outcome: one recoverable error per problem at the field's
 * JSONPath (`address_undeliverable` for a place the store does not ship to, `invalid_address` otherwise).
 */
function destinationMessages(problems: DestinationProblem[], addressPath: string): UcpMessage[] {
  return problems.map((problem) => {
    const field = UCP_ADDRESS_FIELDS[problem.field];
    return fulfillmentProblem(
      `${addressPath}.${field}`,
      problem.code === 'not_shipped' ? 'address_undeliverable' : 'invalid_address',
      `${problem.message.replace(`${problem.field}:`, `${field}:`)}.`,
    );
  });
}

/**
 * UCP 2026-08-25 `item.quantity_unit`: this store sells every item in whole items (`each`, C62 at scale 0). A line
 * asserting another unit is refused with a recoverable message at its path, never reinterpreted; a line without one
 * makes no assertion. (2026-04-08 has no such field: its requests ignore it.)
 */
export function unitMessages(input: UcpCheckoutRequest, version: UcpVersion): UcpMessage[] {
  if (version !== '2026-08-25') return [];
  return input.line_items.flatMap((line, index) => {
    const unit = line.item.quantity_unit;
    if (!unit || isEachUnit(unit)) return [];
    return [
      ucpMessage({
        type: 'error',
        code: 'quantity_unit_unsupported',
        severity: 'recoverable',
        path: `$.line_items[${index}].item.quantity_unit`,
        content: `${line.item.id} is sold in whole items only (unit ${EACH_UNIT.unit}, scale ${EACH_UNIT.scale}), not in ${unit.unit} at scale ${unit.scale ?? 0}: send quantity as a number of items, without quantity_unit or with unit ${EACH_UNIT.unit}.`,
      }),
    ];
  });
}

export function problemMessages(
  problems: sessions.LineProblem[],
  severity: 'recoverable' | 'unrecoverable',
): UcpMessage[] {
  return problems.map((problem) =>
    ucpMessage({ type: 'error', code: problem.code, severity, path: problem.path, content: problem.content }),
  );
}

export function createUcpOperations(deps: Deps) {
  const rendering = {
    baseUrl: deps.config.baseUrl,
    links: ucpLinks(deps),
  };
  const request = (op: 'create' | 'update', call: UcpCall) =>
    validated(
      deps.validators,
      call.negotiated.version === '2026-08-25' ? (`ucp@2026-08-25.${op}` as const) : (`ucp.${op}` as const),
      call.body,
    );
  const checkout = (
    status: number,
    session: ProtocolSession,
    call: UcpCall,
    extra: UcpMessage[] = [],
    notReady = false,
  ): ProtocolResponse =>
    jsonResponse(
      status,
      toUcpCheckout(session, {
        baseUrl: rendering.baseUrl,
        links: rendering.links,
        version: call.negotiated.version,
        namespace: ucpNamespace(deps, call.negotiated.version),
        discountNegotiated: call.negotiated.discount,
        fulfillmentNegotiated: call.negotiated.fulfillment,
        notReady,
        extraMessages: [...extra, ...call.notes],
      }),
    );
  const errorResponse = (messages: UcpMessage[], call: UcpCall): ProtocolResponse =>
    jsonResponse(200, ucpErrorResponse(messages, rendering.baseUrl, call.negotiated.version));
  const notFound = (id: string, call: UcpCall): ProtocolResponse =>
    jsonResponse(
      200,
      ucpErrorResponse(
        [
          ucpMessage({
            type: 'error',
            code: 'not_found',
            severity: 'unrecoverable',
            content: `No checkout session with id ${id}.`,
          }),
        ],
        rendering.baseUrl,
        call.negotiated.version,
      ),
    );
  const notModifiable = (session: ProtocolSession) =>
    new ProtocolError(
      409,
      'checkout_not_modifiable',
      `Checkout ${session.id} is ${session.state} and can no longer change.`,
    );

  /** The create's plan: what to store, and its answer (run by createProtocolSession in one read and one write). */
  function create(call: UcpCall): CreatePlan<{ country: string | undefined }> | { refused: ProtocolResponse } {
    const input = request('create', call);
    const country = input.context?.address_country;
    const discounts = discountCodes(input, call.negotiated.discount);
    const units = unitMessages(input, call.negotiated.version);
    if (units.length) return { refused: errorResponse(units, call) };
    const shipping = shippingRequest(input, call, 'create');
    // What the store cannot do is reported with the checkout, created without any of the fulfillment asked for.
    const change = shipping.problems.length ? undefined : shipping.change;
    // Without a market named, the address's country chooses it (so its region's prices and options apply).
    const marketCountry = country ?? countryCodeOf(change?.address?.country)?.toLowerCase();
    return {
      input: {
        market: { country: marketCountry },
        lines: requestedLines(input),
        codes: discounts.codes ?? [],
        buyer: buyerOf(input),
        ...(change ? { shipping: { address: change.address ?? undefined, option: change.option ?? undefined } } : {}),
        ...(call.profileUrl ? { origin: ucpOrigin(deps, call.profileUrl, call.negotiated) } : {}),
      },
      respond(outcome) {
        if (outcome.kind === 'rejected') return errorResponse(problemMessages(outcome.problems, 'unrecoverable'), call);
        const addressed = destinationMessages(outcome.destinationProblems, shipping.addressPath ?? '$.fulfillment');
        const notReady = [...shipping.problems, ...addressed];
        const notes = [...notReady, ...shipping.notes, ...discounts.notes];
        if (country && !outcome.countryServed)
          notes.push(
            ucpMessage({
              type: 'info',
              code: 'market_defaulted',
              path: '$.context.address_country',
              content: `This store does not sell to ${country}; prices are in the default market.`,
            }),
          );
        return checkout(201, outcome.session, call, notes, notReady.length > 0);
      },
    };
  }

  const get =
    (call: UcpCall) =>
    async (db: Db): Promise<ProtocolResponse> => {
      const session = await sessions.loadProtocolSession(deps, db, call.id!);
      return session ? checkout(200, session, call) : notFound(call.id!, call);
    };

  function update(call: UcpCall): (db: Db) => Promise<ProtocolResponse> {
    const input = request('update', call);
    const discounts = discountCodes(input, call.negotiated.discount);
    const units = unitMessages(input, call.negotiated.version);
    const shipping = shippingRequest(input, call, 'update');
    if (units.length || shipping.problems.length)
      // Nothing changes: the checkout as it is, with what to fix.
      return async (db) => {
        const session = await sessions.loadProtocolSession(deps, db, call.id!);
        if (!session) return notFound(call.id!, call);
        if (session.state === 'canceled' || session.state === 'completed') throw notModifiable(session);
        return checkout(200, session, call, [...units, ...shipping.problems], shipping.problems.length > 0);
      };
    const notes = [...shipping.notes, ...discounts.notes];
    return async (db) => {
      // PUT replaces the checkout: an absent buyer (or codes, or fulfillment, when negotiated) is cleared. `context` is ignored: the market is fixed at create.
      const outcome = await sessions.changeProtocolSession(deps, db, call.id!, {
        lines: requestedLines(input),
        buyer: buyerOf(input),
        codes: discounts.codes,
        shipping: shipping.change,
      });
      if (outcome.kind === 'not_found') return notFound(call.id!, call);
      if (outcome.kind === 'not_modifiable') throw notModifiable(outcome.session);
      if (outcome.kind === 'rejected')
        return checkout(200, outcome.session, call, [...problemMessages(outcome.problems, 'recoverable'), ...notes]);
      if (outcome.kind === 'invalid_destination')
        // The session as it was: the address is refused, field by field.
        return checkout(
          200,
          outcome.session,
          call,
          [...destinationMessages(outcome.problems, shipping.addressPath ?? '$.fulfillment'), ...notes],
          true,
        );
      return checkout(200, outcome.session, call, notes);
    };
  }

  /** Completion never takes payment here: the answer is the checkout, still requires_escalation, with the hand-off. */
  function complete(call: UcpCall): (db: Db) => Promise<ProtocolResponse> {
    validated(deps.validators, 'ucp.complete', call.body);
    return async (db) => {
      const session = await sessions.loadProtocolSession(deps, db, call.id!);
      if (!session) return notFound(call.id!, call);
      if (session.state === 'canceled' || session.state === 'completed') throw notModifiable(session);
      return checkout(200, session, call);
    };
  }

  const cancel =
    (call: UcpCall) =>
    async (db: Db): Promise<ProtocolResponse> => {
      const outcome = await sessions.cancelProtocolSession(deps, db, call.id!);
      if (outcome.kind === 'not_found') return notFound(call.id!, call);
      if (outcome.kind === 'not_modifiable') throw notModifiable(outcome.session);
      return checkout(200, outcome.session, call);
    };

  /** Each operation's body checked (throwing its ProtocolError), into what runs in the transaction. */
  const operations: Record<
    Exclude<UcpOperation, 'create'>,
    (call: UcpCall) => (db: Db) => Promise<ProtocolResponse>
  > = {
    get,
    update,
    complete,
    cancel,
  };
  return { create, operations };
}
