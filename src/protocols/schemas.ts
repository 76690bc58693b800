// The protocols' own JSON Schemas (copied verbatim into protocols/), compiled by the process's validator registry
// (src/validators.ts) on first use. The bindings validate requests and profiles with them, and tests and the conformance runner validate every
// response body with them: a body claimed to be UCP or ACP is checked against the protocol's text, not a copy of it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ErrorObject, ValidateFunction } from 'ajv';
import { createValidatorRegistry, type ValidatorRegistry } from '../validators.js';
import { mostSpecificError } from '../http/validation-errors.js';
import { projectPath } from '../paths.js';

const UCP_SCHEMAS = projectPath('protocols', 'ucp-2026-04-08', 'source', 'schemas');
/** UCP 2026-08-25: the same `$id`s as 2026-04-08 (https://ucp.dev/schemas/…), so a document set of its own. */
const UCP_2026_08_25_SCHEMAS = projectPath('protocols', 'ucp-2026-08-25', 'source', 'schemas');
const ACP_SCHEMA = projectPath(
  'protocols',
  'acp-2026-04-17',
  'spec',
  '2026-04-17',
  'json-schema',
  'schema.agentic_checkout.json',
);

export const UCP_SCHEMA_BASE = 'https://ucp.dev/schemas/';
export const ACP_SCHEMA_ID = 'https://example.com/schemas/agentic-checkout/bundle.schema.json';
const ACP_FEED_SCHEMA = projectPath(
  'protocols',
  'acp-2026-04-17',
  'spec',
  '2026-04-17',
  'json-schema',
  'schema.feed.json',
);
const ACP_FEED_SCHEMA_ID = 'https://example.com/schemas/feed/bundle.schema.json';
const ACP_CART_SCHEMA = projectPath(
  'protocols',
  'acp-2026-04-17',
  'spec',
  '2026-04-17',
  'json-schema',
  'schema.cart.json',
);
export const ACP_CART_SCHEMA_ID = 'https://example.com/schemas/cart/bundle.schema.json';

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? jsonFiles(join(dir, entry.name))
      : entry.name.endsWith('.json')
        ? [join(dir, entry.name)]
        : [],
  );
}

const acpBundle = JSON.parse(readFileSync(ACP_SCHEMA, 'utf8')) as { $defs: Record<string, object> };

/**
 * ACP's cart bundle. It names the checkout bundle's types as `schema.agentic_checkout.json#/$defs/…`, relative to its
 * own `$id` (…/schemas/cart/), where the checkout bundle is not published (its `$id` is …/agentic-checkout/…): those
 * references are made absolute to the checkout bundle's `$id`, nothing else is changed.
 */
const acpCartBundle = JSON.parse(
  readFileSync(ACP_CART_SCHEMA, 'utf8').replaceAll('"schema.agentic_checkout.json#/$defs/', `"${ACP_SCHEMA_ID}#/$defs/`),
) as { $defs: Record<string, object> };

/** A definition of ACP's cart bundle as a standalone schema (its `#/$defs/…` references made absolute), to adapt. */
export function acpCartDefinition(name: string): Record<string, any> {
  return JSON.parse(
    JSON.stringify(acpCartBundle.$defs[name]).replaceAll('"#/$defs/', `"${ACP_CART_SCHEMA_ID}#/$defs/`),
  ) as Record<string, any>;
}

/** A definition of the ACP bundle as a standalone schema (its `#/$defs/…` references made absolute), to adapt. */
export function acpDefinition(name: string): Record<string, any> {
  return JSON.parse(
    JSON.stringify(acpBundle.$defs[name]).replaceAll('"#/$defs/', `"${ACP_SCHEMA_ID}#/$defs/`),
  ) as Record<string, any>;
}

/** The sets of protocol schemas in the validator registry (src/validators.ts), for the validators that refer to them. */
export const PROTOCOL_DOCUMENTS = 'protocols';
/** UCP 2026-08-25's schemas (beside ACP's): the names starting `ucp@2026-08-25.` are compiled with these. */
export const UCP_2026_08_25_DOCUMENTS = 'protocols@2026-08-25';

const readJson = (file: string) => JSON.parse(readFileSync(file, 'utf8')) as object;

/** Every protocol schema that others refer to by `$id`: the UCP 2026-04-08 files and ACP's bundles. */
export function protocolDocuments(): object[] {
  return [...jsonFiles(UCP_SCHEMAS).map(readJson), acpBundle, acpCartBundle, readJson(ACP_FEED_SCHEMA)];
}

/** The same with UCP 2026-08-25's files in place of 2026-04-08's. */
export function protocolDocuments20260825(): object[] {
  return [...jsonFiles(UCP_2026_08_25_SCHEMAS).map(readJson), acpBundle, acpCartBundle, readJson(ACP_FEED_SCHEMA)];
}

/** The registry of this service (src/service.ts builds one), or one of a test's or tool's own. */
export function protocolValidators(): ValidatorRegistry {
  return createValidatorRegistry({
    [PROTOCOL_DOCUMENTS]: protocolDocuments,
    [UCP_2026_08_25_DOCUMENTS]: protocolDocuments20260825,
  });
}

const ucp = (ref: string) => ({ $ref: `${UCP_SCHEMA_BASE}${ref}` });
const acp = (name: string) => ({ $ref: `${ACP_SCHEMA_ID}#/$defs/${name}` });

/** The yardsticks, by name. */
export const PROTOCOL_SCHEMAS = {
  /** UCP REST create/get/update/complete/cancel answer (rest.openapi.json `checkout_response`). */
  'ucp.checkout_response': { oneOf: [ucp('shopping/checkout.json'), ucp('shopping/types/error_response.json')] },
  'ucp.checkout': ucp('shopping/checkout.json'),
  'ucp.checkout_with_discount': ucp('shopping/discount.json#/$defs/dev.ucp.shopping.checkout'),
  'ucp.cart_with_discount': ucp('shopping/discount.json#/$defs/dev.ucp.shopping.cart'),
  'ucp.checkout_with_fulfillment': ucp('shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout'),
  'ucp.error_response': ucp('shopping/types/error_response.json'),
  /** The catalog and cart answers (rest.openapi.json `cart_response`, `catalog_*_response`). */
  'ucp.cart_response': { oneOf: [ucp('shopping/cart.json'), ucp('shopping/types/error_response.json')] },
  'ucp.catalog_search_response': ucp('shopping/catalog_search.json#/$defs/search_response'),
  'ucp.catalog_lookup_response': ucp('shopping/catalog_lookup.json#/$defs/lookup_response'),
  'ucp.catalog_get_product_response': {
    oneOf: [ucp('shopping/catalog_lookup.json#/$defs/get_product_response'), ucp('shopping/types/error_response.json')],
  },
  /** UCP REST get_order answer (rest.openapi.json `order_response`), and the body of an order event. */
  'ucp.order_response': { oneOf: [ucp('shopping/order.json'), ucp('shopping/types/error_response.json')] },
  'ucp.order': ucp('shopping/order.json'),
  'ucp.business_profile': {
    type: 'object',
    required: ['ucp'],
    properties: { ucp: ucp('ucp.json#/$defs/business_schema') },
  },
  'ucp.platform_profile': {
    type: 'object',
    required: ['ucp'],
    properties: { ucp: ucp('ucp.json#/$defs/platform_schema') },
  },
  // UCP 2026-08-25 (shared types under common/types/, the profile's entry point profile.json).
  'ucp@2026-08-25.checkout_response': {
    oneOf: [ucp('shopping/checkout.json'), ucp('common/types/error_response.json')],
  },
  'ucp@2026-08-25.checkout': ucp('shopping/checkout.json'),
  'ucp@2026-08-25.checkout_with_discount': ucp('shopping/discount.json#/$defs/dev.ucp.shopping.checkout'),
  'ucp@2026-08-25.cart_with_discount': ucp('shopping/discount.json#/$defs/dev.ucp.shopping.cart'),
  'ucp@2026-08-25.checkout_with_fulfillment': ucp('shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout'),
  'ucp@2026-08-25.error_response': ucp('common/types/error_response.json'),
  'ucp@2026-08-25.cart_response': { oneOf: [ucp('shopping/cart.json'), ucp('common/types/error_response.json')] },
  'ucp@2026-08-25.catalog_search_response': ucp('shopping/catalog_search.json#/$defs/search_response'),
  'ucp@2026-08-25.catalog_lookup_response': ucp('shopping/catalog_lookup.json#/$defs/lookup_response'),
  'ucp@2026-08-25.catalog_get_product_response': {
    oneOf: [
      ucp('shopping/catalog_lookup.json#/$defs/get_product_response'),
      ucp('common/types/error_response.json'),
    ],
  },
  'ucp@2026-08-25.order_response': { oneOf: [ucp('shopping/order.json'), ucp('common/types/error_response.json')] },
  'ucp@2026-08-25.order': ucp('shopping/order.json'),
  'ucp@2026-08-25.business_profile': ucp('profile.json#/$defs/business_schema'),
  'ucp@2026-08-25.platform_profile': ucp('profile.json#/$defs/platform_schema'),
  'acp.CheckoutSession': acp('CheckoutSession'),
  'acp.CheckoutSessionWithOrder': acp('CheckoutSessionWithOrder'),
  'acp.Error': acp('Error'),
  /** The `Order` of an ACP order webhook (`data`). */
  'acp.Order': acp('Order'),
  'acp.DiscoveryResponse': acp('DiscoveryResponse'),
  /** ACP's cart (schema.cart.json): what the /acp/carts operations answer. */
  'acp.Cart': { $ref: `${ACP_CART_SCHEMA_ID}#/$defs/Cart` },
  /** The product feed: what GET /acp/feed/products answers, and what `npm run feed:export` writes. */
  'acp.feed.ProductsResponse': { $ref: `${ACP_FEED_SCHEMA_ID}#/$defs/ProductsResponse` },
  'acp.feed.UpsertProductsRequest': { $ref: `${ACP_FEED_SCHEMA_ID}#/$defs/UpsertProductsRequest` },
} as const;

export type ProtocolSchemaName = keyof typeof PROTOCOL_SCHEMAS;

/** The yardsticks that check what a client sends rather than what this service answers: validated as input. */
const CLIENT_DOCUMENTS: ReadonlySet<ProtocolSchemaName> = new Set([
  'ucp.platform_profile',
  'ucp@2026-08-25.platform_profile',
]);

/** The document set a yardstick is compiled with. */
const documentsOf = (name: ProtocolSchemaName) =>
  name.startsWith('ucp@2026-08-25.') ? UCP_2026_08_25_DOCUMENTS : PROTOCOL_DOCUMENTS;

export interface SchemaProblem {
  path: string;
  message: string;
}

function problemsOf(errors: ErrorObject[] | null | undefined): SchemaProblem[] {
  return (errors ?? []).map((error) => ({
    path: error.instancePath || '/',
    message: `${error.message ?? 'invalid'}${error.params ? ` ${JSON.stringify(error.params)}` : ''}`,
  }));
}

/**
 * Validates `value` against a protocol schema; an empty list means valid. A client's document (a platform profile)
 * gets its first problem only (src/validators.ts `firstError`), an answer of this service every problem.
 */
export function protocolSchemaProblems(
  validators: ValidatorRegistry,
  name: ProtocolSchemaName,
  value: unknown,
): SchemaProblem[] {
  const variant = CLIENT_DOCUMENTS.has(name) ? 'firstError' : 'everyError';
  const validate = validators.validator(variant, `protocol:${name}`, PROTOCOL_SCHEMAS[name], documentsOf(name));
  return validate(value) ? [] : problemsOf(validate.errors);
}

/**
 * A validator of untrusted input (a request body, tool arguments) for a schema written over the protocol schemas (by
 * `$ref`), compiled once per `key`: it stops at the first error, so its `errors` hold that one (and, under a `oneOf` or
 * `anyOf`, its branches' first errors).
 */
export function schemaByRef(validators: ValidatorRegistry, key: string, schema: object): ValidateFunction {
  return validators.validator('firstError', key, schema, PROTOCOL_DOCUMENTS);
}

/** The most telling error of `value` against `validate`, or undefined when it is valid. */
export function firstSchemaError(validate: ValidateFunction, value: unknown): ErrorObject | undefined {
  return validate(value) ? undefined : mostSpecificError(validate.errors ?? []);
}

const ANNOTATIONS = new Set(['description', 'example', 'examples', 'title']);
/** Keywords whose value maps names (of properties, of definitions) to schemas: the names are not keywords. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'dependentSchemas']);

/** A schema without its annotations (descriptions, titles, examples), its properties named whatever they are. */
function withoutAnnotations(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutAnnotations);
  if (typeof schema !== 'object' || schema === null) return schema;
  return Object.fromEntries(
    Object.entries(schema).flatMap(([keyword, value]) => {
      if (ANNOTATIONS.has(keyword)) return [];
      if (SCHEMA_MAPS.has(keyword) && typeof value === 'object' && value !== null)
        return [
          [
            keyword,
            Object.fromEntries(Object.entries(value).map(([name, inner]) => [name, withoutAnnotations(inner)])),
          ],
        ];
      return [[keyword, withoutAnnotations(value)]];
    }),
  );
}

/**
 * An ACP schema (a definition's name, or a schema written over the bundle by absolute `$ref`) as a self-contained
 * JSON Schema: `schema`, whose references are `#/$defs/…`, and `$defs`, every definition it references transitively,
 * which belong at the root of the document `schema` is placed in. For a client that cannot resolve the bundle's id
 * (an MCP tool listing). `terse` drops descriptions, titles and examples (a checkout session's schema is 62 kB with
 * them, 22 kB without).
 */
export function acpSelfContained(
  given: string | object,
  options: { terse?: boolean } = {},
): { schema: Record<string, unknown>; $defs: Record<string, unknown> } {
  const schema = (
    typeof given === 'string'
      ? { $ref: `#/$defs/${given}` }
      : JSON.parse(JSON.stringify(given).replaceAll(`"${ACP_SCHEMA_ID}#/$defs/`, '"#/$defs/'))
  ) as Record<string, unknown>;
  const needed = new Set<string>();
  const referenced = (value: unknown) =>
    [...JSON.stringify(value).matchAll(/"#\/\$defs\/([A-Za-z0-9_]+)"/g)].map((match) => match[1]!);
  const pending = referenced(schema);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (needed.has(next)) continue;
    needed.add(next);
    pending.push(...referenced(acpBundle.$defs[next]));
  }
  const shape = (value: unknown) => (options.terse ? withoutAnnotations(value) : value) as Record<string, unknown>;
  return {
    schema: shape(schema),
    $defs: Object.fromEntries([...needed].sort().map((def) => [def, shape(acpBundle.$defs[def])])),
  };
}
