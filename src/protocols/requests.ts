// The bindings' request schemas. UCP: derived from shopping/checkout.json with its `ucp_request` annotations applied
// by hand (A.4 of the design): fields the protocol marks `omit`, and unknown fields, are ignored, never rejected.
// ACP: the published request schemas (B.4), closed as published, with one correction: a line is `{id, quantity?}` or
// `{item: {id}, quantity}` (the published `Item` has no quantity). Problems come back as RFC 9535 JSONPaths.
import type { ErrorObject } from 'ajv';
import { jsonPath, type BuyerDetails } from '../domain/protocol-session.js';
import { unstorableTextAt } from '../domain/text.js';
import { ACP_SCHEMA_ID, acpCartDefinition, acpDefinition, firstSchemaError, schemaByRef } from './schemas.js';
import type { ValidatorRegistry } from '../validators.js';

const quantity = { type: 'integer', minimum: 1, maximum: 100 };
const codes = { type: 'array', maxItems: 20, items: { type: 'string', minLength: 1, maxLength: 64 } };

const ucpBuyer = {
  type: 'object',
  properties: {
    email: { type: 'string', format: 'email', maxLength: 254 },
    first_name: { type: 'string', maxLength: 100 },
    last_name: { type: 'string', maxLength: 100 },
    phone_number: { type: 'string', maxLength: 32 },
  },
};

const ucpLines = {
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: {
    type: 'object',
    required: ['item', 'quantity'],
    properties: {
      id: { type: 'string' },
      item: { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 200 } } },
      quantity,
    },
  },
};

/** Free text of an address: bounded here, its content checked by the destination check (a business outcome). */
const addressText = { type: 'string', maxLength: 1000 };
const ucpId = { type: 'string', maxLength: 200 };

/**
 * UCP's fulfillment (shopping/types/fulfillment.json) as a platform writes it: methods with their type, shipping
 * destinations (postal_address.json with an id), the selected destination and each group's selected option. What the
 * business writes (options, group line ids, available_methods) is ignored, as `ucp_request` marks it `omit`.
 */
const ucpFulfillment = {
  type: 'object',
  properties: {
    methods: {
      type: 'array',
      maxItems: 10,
      items: {
        type: 'object',
        properties: {
          id: ucpId,
          type: { type: 'string', maxLength: 64 },
          line_item_ids: { type: 'array', maxItems: 100, items: ucpId },
          destinations: {
            type: 'array',
            maxItems: 10,
            items: {
              type: 'object',
              properties: Object.fromEntries(
                [
                  'id',
                  'type',
                  'first_name',
                  'last_name',
                  'phone_number',
                  'street_address',
                  'extended_address',
                  'address_locality',
                  'address_region',
                  'postal_code',
                  'address_country',
                ].map((field) => [field, addressText]),
              ),
            },
          },
          selected_destination_id: { anyOf: [{ type: 'string', maxLength: 200 }, { type: 'null' }] },
          groups: {
            type: 'array',
            maxItems: 10,
            items: {
              type: 'object',
              properties: { id: ucpId, selected_option_id: { anyOf: [{ type: 'string', maxLength: 200 }, { type: 'null' }] } },
            },
          },
        },
      },
    },
  },
};

const ucpCheckoutRequest = {
  type: 'object',
  required: ['line_items'],
  properties: {
    line_items: ucpLines,
    buyer: ucpBuyer,
    context: { type: 'object', properties: { address_country: { type: 'string', maxLength: 64 } } },
    discounts: { type: 'object', properties: { codes } },
    fulfillment: ucpFulfillment,
  },
};

/**
 * UCP 2026-08-25's `item.quantity_unit` (common/types/quantity_unit.json: a unit descriptor, `unit` and `display_text`
 * required, `scale` 0–15, `C62` only at scale 0, plus `increment`), bounded in length. 2026-04-08 has no such field, so
 * its requests ignore it like any other unknown field.
 */
const quantityUnit = {
  type: 'object',
  required: ['unit', 'display_text'],
  properties: {
    unit: { type: 'string', minLength: 1, maxLength: 64 },
    scale: { type: 'integer', minimum: 0, maximum: 15 },
    display_text: { type: 'string', maxLength: 200 },
    increment: { type: 'integer', minimum: 1 },
  },
  if: { properties: { unit: { const: 'C62' } }, required: ['unit'] },
  then: { properties: { scale: { const: 0 } } },
};

const ucpCheckoutRequest20260825 = {
  ...ucpCheckoutRequest,
  properties: {
    ...ucpCheckoutRequest.properties,
    line_items: {
      ...ucpLines,
      items: {
        ...ucpLines.items,
        properties: {
          ...ucpLines.items.properties,
          item: {
            ...ucpLines.items.properties.item,
            properties: { ...ucpLines.items.properties.item.properties, quantity_unit: quantityUnit },
          },
        },
      },
    },
  },
};

/** The catalog requests (catalog_search.json, catalog_lookup.json), bounded; other fields are ignored. */
const catalogContext = {
  type: 'object',
  properties: { address_country: { type: 'string', maxLength: 64 }, currency: { type: 'string', maxLength: 16 } },
};
const identifier = { type: 'string', minLength: 1, maxLength: 200 };
/** search_filters.json: categories and price, and any other (extension-defined) key, which is answered as unsupported. */
const catalogFilters = {
  type: 'object',
  maxProperties: 20,
  properties: {
    categories: { type: 'array', maxItems: 20, items: identifier },
    price: {
      type: 'object',
      properties: { min: { type: 'integer', minimum: 0 }, max: { type: 'integer', minimum: 0 } },
    },
  },
};

const ucpCatalogSearch = {
  type: 'object',
  properties: {
    query: { type: 'string', maxLength: 500 },
    context: catalogContext,
    filters: catalogFilters,
    pagination: {
      type: 'object',
      properties: { cursor: { type: 'string', maxLength: 100 }, limit: { type: 'integer', minimum: 1 } },
    },
  },
};

const ucpCatalogLookup = {
  type: 'object',
  required: ['ids'],
  properties: {
    ids: { type: 'array', minItems: 1, maxItems: 50, items: identifier },
    context: catalogContext,
    filters: catalogFilters,
  },
};

const ucpGetProduct = {
  type: 'object',
  required: ['id'],
  properties: {
    id: identifier,
    selected: {
      type: 'array',
      maxItems: 20,
      items: {
        type: 'object',
        required: ['name', 'label'],
        properties: {
          name: { type: 'string', maxLength: 200 },
          label: { type: 'string', maxLength: 200 },
          id: { type: 'string', maxLength: 200 },
        },
      },
    },
    preferences: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 200 } },
    context: catalogContext,
    filters: catalogFilters,
  },
};

/** A checkout create converting a cart (cart.json `$defs/checkout`): the cart's contents are used, not the body's. */
const ucpCartConversion = {
  type: 'object',
  required: ['cart_id'],
  properties: { cart_id: identifier, discounts: { type: 'object', properties: { codes } } },
};

const ACP_DEFS = `${ACP_SCHEMA_ID}#/$defs/`;

const acpLine = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['id'],
      properties: { id: { type: 'string', minLength: 1, maxLength: 200 }, quantity },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['item', 'quantity'],
      properties: {
        item: {
          type: 'object',
          additionalProperties: false,
          required: ['id'],
          properties: { id: { type: 'string', minLength: 1, maxLength: 200 } },
        },
        quantity,
      },
    },
  ],
};

/** A published ACP request schema, with the corrected `line_items` and bounded discount codes. */
function acpRequest(name: string, required: string[] = []) {
  const schema = acpDefinition(name);
  schema.properties.line_items = { type: 'array', minItems: 1, maxItems: 100, items: acpLine };
  schema.properties.discounts = { type: 'object', additionalProperties: false, properties: { codes } };
  schema.properties.coupons = codes;
  schema.required = [...new Set([...(schema.required ?? []), ...required])];
  return schema;
}

/** A published ACP cart request schema (schema.cart.json), with the corrected `line_items`. */
function acpCartRequest(name: string) {
  const schema = acpCartDefinition(name);
  schema.properties.line_items = { type: 'array', minItems: 1, maxItems: 100, items: acpLine };
  return schema;
}

/**
 * A checkout create from a cart (ACP's cart RFC: `cart_id` on CheckoutSessionCreateRequest, which the 2026-04-17
 * schema does not have yet): the create request with `cart_id`, and `line_items` optional and ignored (the cart's are
 * used; the RFC sends `[]`).
 */
function acpCheckoutFromCart() {
  const schema = acpRequest('CheckoutSessionCreateRequest', ['cart_id', 'currency', 'capabilities']);
  schema.properties.cart_id = { type: 'string', minLength: 1, maxLength: 200 };
  schema.properties.line_items = { type: 'array', maxItems: 100, items: acpLine };
  return schema;
}

export const REQUEST_SCHEMAS = {
  'ucp.create': ucpCheckoutRequest,
  'ucp.update': ucpCheckoutRequest,
  'ucp@2026-08-25.create': ucpCheckoutRequest20260825,
  'ucp@2026-08-25.update': ucpCheckoutRequest20260825,
  'ucp.catalog_search': ucpCatalogSearch,
  'ucp.catalog_lookup': ucpCatalogLookup,
  'ucp.get_product': ucpGetProduct,
  'ucp.cart_conversion': ucpCartConversion,
  'ucp.complete': {
    type: 'object',
    required: ['payment'],
    properties: { payment: { type: 'object', properties: { instruments: { type: 'array' } } } },
  },
  'acp.create': acpRequest('CheckoutSessionCreateRequest', ['line_items', 'currency', 'capabilities']),
  'acp.update': acpRequest('CheckoutSessionUpdateRequest'),
  'acp.complete': { $ref: `${ACP_DEFS}CheckoutSessionCompleteRequest` },
  'acp.cancel': { $ref: `${ACP_DEFS}CancelSessionRequest` },
  'acp.cart.create': acpCartRequest('CartCreateRequest'),
  'acp.cart.update': acpCartRequest('CartUpdateRequest'),
  /** The cart RFC's cancel: an empty body or `{}`. */
  'acp.cart.cancel': { type: 'object', additionalProperties: false, properties: {} },
  'acp.cart.checkout': acpCheckoutFromCart(),
} as const satisfies Record<string, object>;

export type RequestSchemaName = keyof typeof REQUEST_SCHEMAS;

export interface RequestProblem {
  kind: 'missing' | 'unknown' | 'invalid';
  /** RFC 9535 JSONPath of the offending field. */
  path: string;
  message: string;
}

function segmentsOf(instancePath: string): Array<string | number> {
  return instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'))
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
}

function describe(error: ErrorObject): RequestProblem {
  const segments = segmentsOf(error.instancePath);
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required') {
    const path = jsonPath([...segments, String(params.missingProperty)]);
    return { kind: 'missing', path, message: `${path} is required.` };
  }
  if (error.keyword === 'additionalProperties') {
    const path = jsonPath([...segments, String(params.additionalProperty)]);
    return { kind: 'unknown', path, message: `${path} is not a field of this request.` };
  }
  const path = jsonPath(segments);
  if (error.keyword === 'oneOf' || error.keyword === 'anyOf')
    return { kind: 'invalid', path, message: `${path} matches none of the accepted forms.` };
  return { kind: 'invalid', path, message: `${path} ${error.message ?? 'is invalid'}.` };
}

/** The top-level fields of a closed request schema (its own, or the ACP definition it refers to); undefined if open. */
function closedFields(schema: {
  $ref?: string;
  additionalProperties?: unknown;
  properties?: object;
}): Set<string> | undefined {
  const own = schema.$ref?.startsWith(ACP_DEFS) ? acpDefinition(schema.$ref.slice(ACP_DEFS.length)) : schema;
  return own.additionalProperties === false ? new Set(Object.keys(own.properties ?? {})) : undefined;
}

const CLOSED_FIELDS = new Map(Object.entries(REQUEST_SCHEMAS).map(([name, schema]) => [name, closedFields(schema)]));

/** The first top-level field a closed request schema does not have, found without the validator. */
function unknownTopLevelField(name: RequestSchemaName, body: unknown): string | undefined {
  const fields = CLOSED_FIELDS.get(name);
  if (!fields || body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  return Object.keys(body).find((field) => !fields.has(field));
}

/**
 * The first problem of a request body against the binding's schema, or undefined when it is valid. The validator
 * stops at its first error (schemaByRef), so the work is linear in the body's size whatever the body holds.
 */
export function requestProblem(
  validators: ValidatorRegistry,
  name: RequestSchemaName,
  body: unknown,
): RequestProblem | undefined {
  const unstorable = unstorableTextAt(body);
  if (unstorable) {
    const path = jsonPath(unstorable);
    return {
      kind: 'invalid',
      path,
      message: `${path} must not contain a NUL character (U+0000) or an unpaired surrogate.`,
    };
  }
  // A field the request may not have explains a missing one better (`items` sent for `line_items`): looked for first.
  const unknown = unknownTopLevelField(name, body);
  if (unknown !== undefined) {
    const path = jsonPath([unknown]);
    return { kind: 'unknown', path, message: `${path} is not a field of this request.` };
  }
  const error = firstSchemaError(schemaByRef(validators, `request:${name}`, REQUEST_SCHEMAS[name]), body);
  return error && describe(error);
}

/** The UCP create and update requests, as `ucpCheckoutRequest` describes them. */
export interface UcpCheckoutRequest {
  line_items: Array<{
    id?: string;
    item: { id: string; quantity_unit?: { unit: string; scale?: number; display_text: string } };
    quantity: number;
  }>;
  buyer?: BuyerDetails;
  context?: { address_country?: string };
  discounts?: { codes?: string[] };
  fulfillment?: UcpFulfillmentRequest;
}

/** A shipping destination as a platform sends it (postal_address.json, with the destination's id). */
export interface UcpDestinationRequest {
  id?: string;
  type?: string;
  first_name?: string;
  last_name?: string;
  phone_number?: string;
  street_address?: string;
  extended_address?: string;
  address_locality?: string;
  address_region?: string;
  postal_code?: string;
  address_country?: string;
}

/** UCP's fulfillment as `ucpFulfillment` describes it. */
export interface UcpFulfillmentRequest {
  methods?: Array<{
    id?: string;
    type?: string;
    line_item_ids?: string[];
    destinations?: UcpDestinationRequest[];
    selected_destination_id?: string | null;
    groups?: Array<{ id?: string; selected_option_id?: string | null }>;
  }>;
}

export interface UcpCatalogContext {
  address_country?: string;
  currency?: string;
}

export interface UcpCatalogSearchRequest {
  query?: string;
  context?: UcpCatalogContext;
  filters?: UcpCatalogFilters;
  pagination?: { cursor?: string; limit?: number };
}

export interface UcpCatalogFilters {
  categories?: string[];
  price?: { min?: number; max?: number };
  [other: string]: unknown;
}

export interface UcpCatalogLookupRequest {
  ids: string[];
  context?: UcpCatalogContext;
  filters?: UcpCatalogFilters;
}

export interface UcpGetProductRequest {
  id: string;
  selected?: Array<{ name: string; label: string; id?: string }>;
  /** Option names in relaxation order: with one option axis here, nothing to order. */
  preferences?: string[];
  context?: UcpCatalogContext;
  filters?: UcpCatalogFilters;
}

export interface UcpCartConversionRequest {
  cart_id: string;
  discounts?: { codes?: string[] };
}

export type AcpLineRequest = { id: string; quantity?: number } | { item: { id: string }; quantity: number };

/** The ACP create and update requests, as `acpRequest` describes them (the fields the operations read). */
export interface AcpSessionRequest {
  line_items?: AcpLineRequest[];
  currency?: string;
  buyer?: BuyerDetails & Record<string, unknown>;
  fulfillment_details?: unknown;
  discounts?: { codes?: string[] };
  coupons?: string[];
  selected_fulfillment_options?: Array<{ type: string; option_id?: string; item_ids?: string[] }>;
}

/** The ACP cart create and update requests (schema.cart.json, lines corrected as the checkout's are). */
export interface AcpCartRequest {
  line_items: AcpLineRequest[];
  buyer?: BuyerDetails & Record<string, unknown>;
  locale?: string;
}

/** What each schema accepts: the schema is the authority, and this is its type for the operations. */
interface RequestTypes {
  'ucp.create': UcpCheckoutRequest;
  'ucp.update': UcpCheckoutRequest;
  'ucp@2026-08-25.create': UcpCheckoutRequest;
  'ucp@2026-08-25.update': UcpCheckoutRequest;
  'ucp.catalog_search': UcpCatalogSearchRequest;
  'ucp.catalog_lookup': UcpCatalogLookupRequest;
  'ucp.get_product': UcpGetProductRequest;
  'ucp.cart_conversion': UcpCartConversionRequest;
  'ucp.complete': unknown;
  'acp.create': AcpSessionRequest;
  'acp.update': AcpSessionRequest;
  'acp.complete': unknown;
  'acp.cancel': unknown;
  'acp.cart.create': AcpCartRequest;
  'acp.cart.update': AcpCartRequest;
  'acp.cart.cancel': unknown;
  'acp.cart.checkout': AcpSessionRequest & { cart_id: string };
}

export type CheckedRequest<Name extends RequestSchemaName> =
  { problem: RequestProblem } | { problem?: undefined; request: RequestTypes[Name] };

/** A body (an absent one is `{}`) checked against its schema: its first problem, or the body as the schema's type. */
export function checkRequest<Name extends RequestSchemaName>(
  validators: ValidatorRegistry,
  name: Name,
  body: unknown,
): CheckedRequest<Name> {
  const value: unknown = body ?? {};
  const problem = requestProblem(validators, name, value);
  // The schema has just accepted the value: the one place a body becomes its request type.
  return problem ? { problem } : { request: value as RequestTypes[Name] };
}
