// The protocols' own JSON Schemas, read from protocols/ (copied verbatim from UCP and ACP), one validator registry
// (src/validators.ts) per protocol version: the runner knows exactly the versions it finds there, and says so when a
// merchant speaks another one.
// Independent of the store's own validators, so the runner can judge any merchant.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ErrorObject } from 'ajv';
import { createValidatorRegistry } from '../validators.js';

export type Protocol = 'ucp' | 'acp';

/** protocols/ of this package (next to package.json), whether running from src/ or dist/src/. */
function protocolsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`protocols/ not found above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  return join(dir, 'protocols');
}

const PROTOCOLS = protocolsDir();

/** The versions of a protocol the runner has schemas for, newest first (from the folder names, e.g. ucp-2026-04-08). */
export function knownVersions(protocol: Protocol): string[] {
  return readdirSync(PROTOCOLS)
    .filter((name) => name.startsWith(`${protocol}-`))
    .map((name) => name.slice(protocol.length + 1))
    .sort()
    .reverse();
}

function jsonFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? jsonFiles(join(dir, entry.name))
      : entry.name.endsWith('.json')
        ? [join(dir, entry.name)]
        : [],
  );
}

const UCP_BASE = 'https://ucp.dev/schemas/';

export interface SchemaProblem {
  path: string;
  message: string;
}

/** A compiled set of one protocol version's schemas. */
export interface SchemaSet {
  protocol: Protocol;
  version: string;
  /** Problems of `value` against the named schema ([] when valid). */
  problems(name: string, value: unknown): SchemaProblem[];
}

/**
 * The named UCP schemas of a version whose error_response is at `errorResponse` (`shopping/types/` up to 2026-04-08,
 * `common/types/` since 2026-08-25).
 */
const ucpSchemas = (errorResponse: string) => ({
  checkout: { $ref: `${UCP_BASE}shopping/checkout.json` },
  checkout_response: {
    oneOf: [{ $ref: `${UCP_BASE}shopping/checkout.json` }, { $ref: `${UCP_BASE}${errorResponse}` }],
  },
  checkout_with_discount: { $ref: `${UCP_BASE}shopping/discount.json#/$defs/dev.ucp.shopping.checkout` },
  checkout_with_fulfillment: { $ref: `${UCP_BASE}shopping/fulfillment.json#/$defs/dev.ucp.shopping.checkout` },
  error_response: { $ref: `${UCP_BASE}${errorResponse}` },
  business_profile: {
    type: 'object',
    required: ['ucp'],
    properties: { ucp: { $ref: `${UCP_BASE}ucp.json#/$defs/business_schema` } },
  },
  catalog_search_response: { $ref: `${UCP_BASE}shopping/catalog_search.json#/$defs/search_response` },
  catalog_lookup_response: { $ref: `${UCP_BASE}shopping/catalog_lookup.json#/$defs/lookup_response` },
  catalog_get_product_response: {
    oneOf: [
      { $ref: `${UCP_BASE}shopping/catalog_lookup.json#/$defs/get_product_response` },
      { $ref: `${UCP_BASE}${errorResponse}` },
    ],
  },
  cart_response: { oneOf: [{ $ref: `${UCP_BASE}shopping/cart.json` }, { $ref: `${UCP_BASE}${errorResponse}` }] },
  order: { $ref: `${UCP_BASE}shopping/order.json` },
  order_response: { oneOf: [{ $ref: `${UCP_BASE}shopping/order.json` }, { $ref: `${UCP_BASE}${errorResponse}` }] },
});

function mostTelling(errors: ErrorObject[]): ErrorObject[] {
  // The deepest instance path first: "line_items/0/totals must be array" says more than "oneOf failed".
  return [...errors].sort((a, b) => b.instancePath.split('/').length - a.instancePath.split('/').length);
}

function build(protocol: Protocol, version: string): SchemaSet {
  // The documents the named schemas refer to by `$id`; the Ajv setup is the one of src/validators.ts, with every error.
  const documents: object[] = [];
  const named = new Map<string, object>();
  if (protocol === 'ucp') {
    const dir = join(PROTOCOLS, `ucp-${version}`, 'source', 'schemas');
    for (const file of jsonFiles(dir)) documents.push(JSON.parse(readFileSync(file, 'utf8')) as object);
    const errorResponse = ['shopping/types/error_response.json', 'common/types/error_response.json'].find((path) =>
      existsSync(join(dir, path)),
    )!;
    for (const [name, schema] of Object.entries(ucpSchemas(errorResponse))) named.set(name, schema);
  } else {
    const dir = join(PROTOCOLS, `acp-${version}`, 'spec', version, 'json-schema');
    const bundle = JSON.parse(readFileSync(join(dir, 'schema.agentic_checkout.json'), 'utf8')) as {
      $id: string;
      $defs: Record<string, object>;
    };
    documents.push(bundle);
    for (const name of Object.keys(bundle.$defs)) named.set(name, { $ref: `${bundle.$id}#/$defs/${name}` });
    // The cart bundle names the checkout bundle's types relative to its own $id, where that bundle is not published:
    // made absolute to the checkout bundle's $id. The feed bundle stands alone; its names are `feed.…`.
    const cartFile = join(dir, 'schema.cart.json');
    if (existsSync(cartFile)) {
      const cart = JSON.parse(
        readFileSync(cartFile, 'utf8').replaceAll('"schema.agentic_checkout.json#/$defs/', `"${bundle.$id}#/$defs/`),
      ) as { $id: string; $defs: Record<string, object> };
      documents.push(cart);
      for (const name of Object.keys(cart.$defs)) named.set(name, { $ref: `${cart.$id}#/$defs/${name}` });
    }
    const feedFile = join(dir, 'schema.feed.json');
    if (existsSync(feedFile)) {
      const feed = JSON.parse(readFileSync(feedFile, 'utf8')) as { $id: string; $defs: Record<string, object> };
      documents.push(feed);
      for (const name of Object.keys(feed.$defs)) named.set(`feed.${name}`, { $ref: `${feed.$id}#/$defs/${name}` });
    }
  }
  const validators = createValidatorRegistry({ [protocol]: () => documents });
  return {
    protocol,
    version,
    problems(name, value) {
      const schema = named.get(name);
      if (!schema) throw new Error(`${protocol} ${version} has no schema ${name}`);
      const validate = validators.validator('everyError', name, schema, protocol);
      if (validate(value)) return [];
      return mostTelling(validate.errors ?? []).map((error) => ({
        path: error.instancePath || '/',
        message: `${error.message ?? 'invalid'}${error.params ? ` ${JSON.stringify(error.params)}` : ''}`,
      }));
    },
  };
}

/** The compiled schema sets of one run: `sets(protocol, version)` compiles a version on first use. */
export type SchemaSets = (protocol: Protocol, version: string) => SchemaSet;

/**
 * A cache of compiled schema sets owned by whoever makes it (the runner: one per run, so nothing outlives it and no
 * module state is kept, issue #30): each version is compiled once on first use.
 */
export function schemaSets(): SchemaSets {
  const sets = new Map<string, SchemaSet>();
  return (protocol, version) => {
    const key = `${protocol}-${version}`;
    let set = sets.get(key);
    if (!set) {
      set = build(protocol, version);
      sets.set(key, set);
    }
    return set;
  };
}
