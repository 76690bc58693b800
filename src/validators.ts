// The process's one JSON Schema setup: Ajv 2020-12 with formats, `strict: false` (the contract and the protocols
// annotate their schemas with keywords of their own), and a registry of compiled validators. Built once by
// src/service.ts and passed to what validates: the contract's operations (openapi-backend's validators, compiled per
// operation), the read cache's keys and header checks, the protocol bindings' requests and profiles, and the MCP tools'
// arguments.
//
// What really differs between validators is an Ajv option, so each difference is a named variant (one Ajv each, built
// on first use), never an instance of a caller's own:
// - `firstError`: what clients send. It stops at the first error: collecting every error of a failing array costs
//   more than quadratic time in its length (36 kB of `[{}, {}, …]` held the event loop for seconds), while stopping at
//   the first keeps validation linear in the input's size.
// - `coercing`: path, query and header values, which arrive as text (`limit=012` is 12), first error only.
// - `everyError`: the yardstick of this service's own answers (tests, conformance), which reports every problem.
//
// Schemas that others refer to by `$id` (the protocols' documents) come in named sets, loaded when a validator first
// needs them: reading and adding the protocols' ~80 files costs about 0.1 s, which a start should not pay for a surface
// that may never be called. Each set has an Ajv of its own per variant, because two versions of one protocol publish
// their schemas under the same `$id`s (UCP 2026-04-08 and 2026-08-25).
import { Ajv2020, type Options, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

export type AjvVariant = 'firstError' | 'coercing' | 'everyError';

const VARIANT_OPTIONS: Record<AjvVariant, Options> = {
  firstError: { allErrors: false },
  coercing: { allErrors: false, coerceTypes: true },
  everyError: { allErrors: true },
};

/** Named sets of schemas referred to by `$id`, each read when first needed. */
export type SchemaDocuments = Record<string, () => object[]>;

export interface ValidatorRegistry {
  /** The variant's Ajv (for a library that compiles with it, as openapi-backend does); built on first use. */
  ajv(variant: AjvVariant): Ajv2020;
  /**
   * `schema` compiled by the variant, once per `key` and kept for the process; `documents` names the set of schemas
   * it refers to, compiled by that set's own Ajv of the variant.
   */
  validator(variant: AjvVariant, key: string, schema: object, documents?: string): ValidateFunction;
}

export function createValidatorRegistry(documents: SchemaDocuments = {}): ValidatorRegistry {
  /** By variant and document set ('' for none): each with its compiled validators. */
  const instances = new Map<string, { ajv: Ajv2020; compiled: Map<string, ValidateFunction> }>();

  function instance(variant: AjvVariant, set = '') {
    const name = `${variant}|${set}`;
    let built = instances.get(name);
    if (!built) {
      const ajv = new Ajv2020({ ...VARIANT_OPTIONS[variant], strict: false, validateFormats: true });
      addFormats.default(ajv);
      if (set) {
        const load = documents[set];
        if (!load) throw new Error(`No schema documents named ${set}`);
        for (const document of load()) ajv.addSchema(document);
      }
      built = { ajv, compiled: new Map() };
      instances.set(name, built);
    }
    return built;
  }

  return {
    ajv: (variant) => instance(variant).ajv,
    validator(variant, key, schema, set) {
      const built = instance(variant, set);
      let validate = built.compiled.get(key);
      if (!validate) {
        validate = built.ajv.compile(schema);
        built.compiled.set(key, validate);
      }
      return validate;
    },
  };
}
