// The protocols' own JSON Schemas (copied verbatim into protocols/), compiled once per process with Ajv 2020-12 +
// formats. The bindings validate requests and profiles with them, and tests and the conformance runner validate every
// response body with them: a body claimed to be UCP or ACP is checked against the protocol's text, not a copy of it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { mostSpecificError } from '../http/validation-errors.js';
import { projectPath } from '../paths.js';

const UCP_SCHEMAS = projectPath('protocols', 'ucp-2026-04-08', 'source', 'schemas');
/** UCP 2026-08-25: the same `$id`s as 2026-04-08 (https://ucp.dev/schemas/…), so it is compiled by Ajv instances of its own. */
const UCP_2026_08_25_SCHEMAS = projectPath('protocols', 'ucp-2026-08-25', 'source', 'schemas');
const ACP_SCHEMA = projectPath('protocols', 'acp-2026-04-17', 'spec', '2026-04-17', 'json-schema', 'schema.agentic_checkout.json');

export const UCP_SCHEMA_BASE = 'https://ucp.dev/schemas/';
export const ACP_SCHEMA_ID = 'https://example.com/schemas/agentic-checkout/bundle.schema.json';

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? jsonFiles(join(dir, entry.name)) : entry.name.endsWith('.json') ? [join(dir, entry.name)] : [],
  );
}

const acpBundle = JSON.parse(readFileSync(ACP_SCHEMA, 'utf8')) as { $defs: Record<string, object> };

/** A definition of the ACP bundle as a standalone schema (its `#/$defs/…` references made absolute), to adapt. */
export function acpDefinition(name: string): Record<string, any> {
  return JSON.parse(JSON.stringify(acpBundle.$defs[name]).replaceAll('"#/$defs/', `"${ACP_SCHEMA_ID}#/$defs/`)) as Record<string, any>;
}

/**
 * `allErrors`: the yardstick of this service's own answers reports every problem; what clients send (request bodies,
 * tool arguments, platform profiles) is checked by an instance that stops at the first error, because collecting every
 * error of a failing array costs more than quadratic time in its length (36 kB of `[{}, {}, …]` held the event loop
 * for seconds), while stopping at the first keeps validation linear in the input's size.
 */
function createAjv(allErrors: boolean, ucpSchemas = UCP_SCHEMAS): Ajv2020 {
  // strict: false — the protocols annotate their schemas with keywords of their own (`ucp_request`, `name`, …).
  const ajv = new Ajv2020({ strict: false, allErrors, validateFormats: true });
  addFormats.default(ajv);
  for (const file of jsonFiles(ucpSchemas)) ajv.addSchema(JSON.parse(readFileSync(file, 'utf8')) as object);
  ajv.addSchema(acpBundle);
  return ajv;
}

interface Validators {
  ajv: Ajv2020 | undefined;
  readonly allErrors: boolean;
  readonly compiled: Map<string, ValidateFunction>;
  /** The UCP version whose schemas this instance holds (beside ACP's). */
  readonly ucpSchemas?: string;
}

/** Answers (tests, conformance runner): every problem. Untrusted input: the first only. Each built when first used. */
const forAnswers: Validators = { ajv: undefined, allErrors: true, compiled: new Map() };
const forInput: Validators = { ajv: undefined, allErrors: false, compiled: new Map() };
/** The same two for UCP 2026-08-25's schemas (the names starting `ucp@2026-08-25.`). */
const forAnswers20260825: Validators = { ajv: undefined, allErrors: true, compiled: new Map(), ucpSchemas: UCP_2026_08_25_SCHEMAS };
const forInput20260825: Validators = { ajv: undefined, allErrors: false, compiled: new Map(), ucpSchemas: UCP_2026_08_25_SCHEMAS };

function validatorFor(validators: Validators, schema: object, key: string): ValidateFunction {
  let validate = validators.compiled.get(key);
  if (!validate) {
    validators.ajv ??= createAjv(validators.allErrors, validators.ucpSchemas);
    validate = validators.ajv.compile(schema);
    validators.compiled.set(key, validate);
  }
  return validate;
}

const ucp = (ref: string) => ({ $ref: `${UCP_SCHEMA_BASE}${ref}` });
const acp = (name: string) => ({ $ref: `${ACP_SCHEMA_ID}#/$defs/${name}` });

/** The yardsticks, by name. */
export const PROTOCOL_SCHEMAS = {
  /** UCP REST create/get/update/complete/cancel answer (rest.openapi.json `checkout_response`). */
  'ucp.checkout_response': { oneOf: [ucp('shopping/checkout.json'), ucp('shopping/types/error_response.json')] },
  'ucp.checkout': ucp('shopping/checkout.json'),
  'ucp.checkout_with_discount': ucp('shopping/discount.json#/$defs/dev.ucp.shopping.checkout'),
  'ucp.error_response': ucp('shopping/types/error_response.json'),
  'ucp.business_profile': { type: 'object', required: ['ucp'], properties: { ucp: ucp('ucp.json#/$defs/business_schema') } },
  'ucp.platform_profile': { type: 'object', required: ['ucp'], properties: { ucp: ucp('ucp.json#/$defs/platform_schema') } },
  // UCP 2026-08-25 (shared types under common/types/, the profile's entry point profile.json).
  'ucp@2026-08-25.checkout_response': { oneOf: [ucp('shopping/checkout.json'), ucp('common/types/error_response.json')] },
  'ucp@2026-08-25.checkout': ucp('shopping/checkout.json'),
  'ucp@2026-08-25.checkout_with_discount': ucp('shopping/discount.json#/$defs/dev.ucp.shopping.checkout'),
  'ucp@2026-08-25.error_response': ucp('common/types/error_response.json'),
  'ucp@2026-08-25.business_profile': ucp('profile.json#/$defs/business_schema'),
  'ucp@2026-08-25.platform_profile': ucp('profile.json#/$defs/platform_schema'),
  'acp.CheckoutSession': acp('CheckoutSession'),
  'acp.CheckoutSessionWithOrder': acp('CheckoutSessionWithOrder'),
  'acp.Error': acp('Error'),
  'acp.DiscoveryResponse': acp('DiscoveryResponse'),
} as const;

export type ProtocolSchemaName = keyof typeof PROTOCOL_SCHEMAS;

/** The yardsticks that check what a client sends rather than what this service answers: validated as input. */
const CLIENT_DOCUMENTS: ReadonlySet<ProtocolSchemaName> = new Set(['ucp.platform_profile', 'ucp@2026-08-25.platform_profile']);

const isUcp20260825 = (name: string) => name.startsWith('ucp@2026-08-25.');

export interface SchemaProblem {
  path: string;
  message: string;
}

function problemsOf(errors: ErrorObject[] | null | undefined): SchemaProblem[] {
  return (errors ?? []).map((error) => ({ path: error.instancePath || '/', message: `${error.message ?? 'invalid'}${error.params ? ` ${JSON.stringify(error.params)}` : ''}` }));
}

/**
 * Validates `value` against a protocol schema; an empty list means valid. A client's document (a platform profile)
 * gets its first problem only (see createAjv), an answer of this service every problem.
 */
export function protocolSchemaProblems(name: ProtocolSchemaName, value: unknown): SchemaProblem[] {
  const input = CLIENT_DOCUMENTS.has(name);
  const validators = isUcp20260825(name) ? (input ? forInput20260825 : forAnswers20260825) : input ? forInput : forAnswers;
  const validate = validatorFor(validators, PROTOCOL_SCHEMAS[name], name);
  return validate(value) ? [] : problemsOf(validate.errors);
}

/**
 * A validator of untrusted input (a request body, tool arguments) for a schema written over the protocol schemas (by
 * `$ref`), compiled once per `key`: it stops at the first error, so its `errors` hold that one (and, under a `oneOf` or
 * `anyOf`, its branches' first errors).
 */
export function schemaByRef(key: string, schema: object): ValidateFunction {
  return validatorFor(forInput, schema, key);
}

/** The most telling error of `value` against `validate`, or undefined when it is valid. */
export function firstSchemaError(validate: ValidateFunction, value: unknown): ErrorObject | undefined {
  return validate(value) ? undefined : mostSpecificError(validate.errors ?? []);
}
