// The service's one error hierarchy. Every error this service raises on purpose is a ServiceError. Domain code and
// services say what went wrong as a DomainError, in the surface-neutral kinds below; a protocol binding that must say
// it in its own words raises a SurfaceError subclass of its own (ProtocolError, src/http/protocol-error.ts; RpcError,
// src/mcp/rpc.ts). Each surface has one renderer, typed from its schema: src/http/errors.ts (the contract's REST
// shapes), src/http/protocol-errors.ts (ACP's Error, UCP's protocol error), src/mcp/rpc.ts (JSON-RPC's error object),
// src/mcp/tools.ts (tool errors). Nothing here knows a status code or a response shape.

/** The root of every error this service raises on purpose; anything else thrown is an unexpected failure. */
export abstract class ServiceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/**
 * An error already said in one surface's own terms (a protocol's status and code, a JSON-RPC error object), raised by
 * that surface's binding and rendered only by that surface's renderer; to any other renderer it is unexpected.
 */
export abstract class SurfaceError extends ServiceError {}

export interface ErrorOptions {
  /** The offending parameter, body field or header, e.g. `limit`, `items[0].quantity`, `Idempotency-Key`. */
  param?: string;
  /** What the caller should do next, when it is more specific than the surface's default advice. */
  resolution?: string;
  /** Where the caller goes next, in domain terms: each surface says it in its own words (REST names a route). */
  next?: NextStep;
  /** Documented extra fields, e.g. `available`, `variant_ids`, `supported_versions`. */
  details?: Record<string, unknown>;
}

/**
 * The next steps errors point to. A service names the step, never a route: the surface that renders the error knows
 * its routes or tools (src/http/errors.ts for REST; MCP clients read the tool's own advice instead).
 */
export type NextStep =
  | { to: 'list_products' | 'find_product' | 'list_regions' }
  | { to: 'list_agent_products' | 'list_agent_collections' | 'list_agent_categories' }
  | { to: 'create_cart' | 'create_new_cart' | 'add_cart_line' }
  | { to: 'change_cart_line'; lineId: string };

/** What went wrong, in the service's surface-neutral kinds (the subclasses below). */
export abstract class DomainError extends ServiceError {
  readonly param: string | undefined;
  readonly resolution: string | undefined;
  readonly next: NextStep | undefined;
  readonly details: Record<string, unknown>;

  constructor(message: string, options: ErrorOptions = {}) {
    super(message);
    this.param = options.param;
    this.resolution = options.resolution;
    this.next = options.next;
    this.details = options.details ?? {};
  }
}

/** Why a request is malformed; checkout reports the reason as its code, the other surfaces have one code for all. */
export type BadRequestReason =
  | 'invalid_body'
  | 'invalid_content_type'
  | 'missing_field'
  | 'unknown_field'
  | 'invalid_field'
  | 'missing_item_identifier'
  | 'ambiguous_item'
  | 'unknown_item'
  | 'variant_required'
  | 'quantity_too_large'
  | 'insufficient_stock'
  | 'item_unavailable_in_region'
  // A shipping address that is not one the store ships to (the field named in `param`)
  | 'invalid_address'
  | 'invalid_parameter'
  | 'unsupported_api_version'
  // A webhook whose signature does not verify (missing, wrong secret, tampered or stale)
  | 'invalid_signature'
  // OAuth 2.0 (RFC 6749 section 5.2, RFC 7591 section 3.2.2)
  | 'invalid_request'
  | 'invalid_scope'
  | 'unsupported_grant_type'
  | 'invalid_client_metadata';

export class BadRequest extends DomainError {
  constructor(
    readonly reason: BadRequestReason,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The thing the request names does not exist (for this caller). */
export class NotFound extends DomainError {}

export type ConflictReason =
  | 'idempotency_in_flight'
  | 'session_completed'
  | 'session_canceled'
  | 'cart_not_open'
  | 'cart_empty'
  | 'line_item_unavailable'
  // The merchant's change is not allowed in the order's current state (src/domain/order-states.ts)
  | 'order_transition_refused'
  // A stock adjustment would take a kept variant's stock below zero
  | 'stock_would_go_negative'
  // A new promotion's code is taken
  | 'promotion_exists';

/** The request is well-formed but conflicts with the current state; `retryAfterSeconds` when waiting resolves it. */
export class Conflict extends DomainError {
  constructor(
    readonly reason: ConflictReason,
    message: string,
    readonly retryAfterSeconds?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export type UnprocessableReason = 'idempotency_conflict' | 'delegated_payment_not_supported';

/** The request is understood and valid, but this service will never carry it out as sent. */
export class Unprocessable extends DomainError {
  constructor(
    readonly reason: UnprocessableReason,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** No bearer token (`unauthorized`) or one that is not valid (`invalid_token`); `challenge` is RFC 6750's. */
export class Unauthorized extends DomainError {
  constructor(
    readonly reason: 'unauthorized' | 'invalid_token',
    message: string,
    readonly challenge?: string,
  ) {
    super(message);
  }
}

/** The token is valid but lacks `scope`. */
export class ForbiddenScope extends DomainError {
  constructor(
    readonly scope: string,
    message: string,
    readonly challenge?: string,
  ) {
    super(message, { details: { scope } });
  }
}

/** The caller may not do this at all: a cross-site form post, a test payment where test payments are off. */
export class Forbidden extends DomainError {
  constructor(
    readonly reason: 'cross_site_request' | 'test_payments_disabled',
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** OAuth client authentication failed (RFC 6749 section 5.2 `invalid_client`). */
export class InvalidClient extends DomainError {}

/** Too many requests; waiting `retryAfterSeconds` resolves it. */
export class RateLimited extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

export class PayloadTooLarge extends DomainError {}

/** A dependency (the database) cannot be reached: transient. Each surface words it. */
export class Unavailable extends DomainError {
  constructor(
    readonly retryAfterSeconds = 5,
    message = 'The service is temporarily unavailable.',
  ) {
    super(message);
  }
}

/**
 * A request read what its change is built from and, each time, found it changed before it could store the change (its
 * key taken or freed by another request, a variant gone), more times than it tries: transient, and nothing was stored.
 * Answered as Unavailable is.
 */
export class NotSettled extends Unavailable {
  constructor(attempts: number) {
    super(1, `Nothing was stored: what this request was built from changed under each of ${attempts} attempts.`);
  }
}

/** The payment processor cannot be reached or failed: transient, and nothing was charged. */
export class ProcessorUnavailable extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds = 5,
  ) {
    super(message, { resolution: 'Reload the page in a few seconds.' });
  }
}

/** No endpoint answers this method and path. */
export class UnknownEndpoint extends DomainError {
  constructor(method: string, path: string) {
    super(`No endpoint answers ${method} ${path}.`);
  }
}

export class MethodNotAllowed extends DomainError {
  constructor(
    method: string,
    path: string,
    readonly allowed: string[],
  ) {
    super(`${method} is not supported on ${path}; use ${allowed.join(' or ')}.`);
  }
}
