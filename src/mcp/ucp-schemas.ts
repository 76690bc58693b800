// The /ucp/mcp tools' schemas: each tool's arguments with its operation's request schema (the one the REST binding
// validates, src/protocols/requests.ts) and its result as UCP's own checkout response (shopping/checkout.json or
// shopping/types/error_response.json, rest.openapi.json `checkout_response`). MCP clients must not fetch a network
// `$ref` (MCP 2026-07-28, basic/index.mdx "$ref Resolution"), so the UCP files the response refers to travel along as
// `$defs`, each reference rewritten to point at its copy: one self-contained JSON Schema 2020-12 document.
import { readFileSync } from 'node:fs';
import { projectPath } from '../paths.js';
import { REQUEST_SCHEMAS, type RequestSchemaName } from '../protocols/requests.js';
import { UCP_SCHEMA_BASE } from '../protocols/schemas.js';

type Json = Record<string, unknown>;

const UCP_SCHEMAS = projectPath('protocols', 'ucp-2026-04-08', 'source', 'schemas');

/** The `$defs` key of a UCP schema file (`shopping/types/buyer.json` → `shopping.types.buyer`). */
const defKey = (file: string) => file.replace(/\.json$/, '').replaceAll('/', '.');

/**
 * The UCP files `roots` refer to, directly or not, bundled: a schema whose `$ref`s point at `#/$defs/<file>…`,
 * and the files, without `$id` or `$schema`, as those `$defs`.
 */
function bundled(roots: string[]): { refs: Json[]; defs: Record<string, unknown> } {
  const defs: Record<string, unknown> = {};
  const pending: string[] = [];
  /** A reference from `base` (a file URL) as a pointer into the bundle. */
  const pointer = (ref: string, base: string): string => {
    const url = new URL(ref, base);
    const file = url.href.split('#')[0]!.slice(UCP_SCHEMA_BASE.length);
    if (!(defKey(file) in defs) && !pending.includes(file)) pending.push(file);
    const fragment = decodeURIComponent(url.hash.slice(1));
    return `#/$defs/${defKey(file)}${fragment === '/' ? '' : fragment}`;
  };
  const rewrite = (node: unknown, base: string): unknown => {
    if (Array.isArray(node)) return node.map((item) => rewrite(item, base));
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node)
        .filter(([key]) => key !== '$id' && key !== '$schema')
        .map(([key, value]) => [
          key,
          key === '$ref' && typeof value === 'string' ? pointer(value, base) : rewrite(value, base),
        ]),
    );
  };
  const refs = roots.map((file) => ({ $ref: pointer(file, UCP_SCHEMA_BASE) }));
  for (let file = pending.shift(); file !== undefined; file = pending.shift()) {
    const schema = JSON.parse(readFileSync(`${UCP_SCHEMAS}/${file}`, 'utf8')) as Json;
    defs[defKey(file)] = true; // taken: its references to itself queue nothing
    defs[defKey(file)] = rewrite(schema, `${UCP_SCHEMA_BASE}${file}`);
  }
  return hoisted(refs, defs);
}

const ANNOTATIONS_ONLY = new Set(['title', 'description', '$comment', '$defs']);

/**
 * The bundle with each file that only holds definitions (`capability.json`, `ucp.json`: a title and `$defs`, no
 * validation keyword, never referred to as a whole) replaced by its definitions, as `<file>.$defs.<name>`, and the
 * references to them rewritten. As a `$defs` entry of its own such a file is a schema that accepts any value, which
 * clients checking tool schemas' portability (MCP Inspector's --strict) report.
 */
function hoisted(refs: Json[], defs: Record<string, unknown>): { refs: Json[]; defs: Record<string, unknown> } {
  const holders = Object.keys(defs).filter((key) => {
    const schema = defs[key] as Json;
    return Object.keys(schema).every((member) => ANNOTATIONS_ONLY.has(member)) && '$defs' in schema;
  });
  if (holders.length === 0) return { refs, defs };
  const flat: Record<string, unknown> = {};
  for (const [key, schema] of Object.entries(defs)) {
    if (!holders.includes(key)) flat[key] = schema;
    else
      for (const [name, inner] of Object.entries((schema as Json).$defs as Record<string, unknown>))
        flat[`${key}.$defs.${name}`] = inner;
  }
  const pointer = (ref: string) => {
    for (const key of holders) {
      const prefix = `#/$defs/${key}/$defs/`;
      if (!ref.startsWith(prefix)) continue;
      const [name, ...rest] = ref.slice(prefix.length).split('/');
      return [`#/$defs/${key}.$defs.${name}`, ...rest].join('/');
    }
    return ref;
  };
  const rewrite = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(rewrite);
    if (node === null || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([key, value]) => [
        key,
        key === '$ref' && typeof value === 'string' ? pointer(value) : rewrite(value),
      ]),
    );
  };
  return { refs: refs.map((ref) => rewrite(ref) as Json), defs: rewrite(flat) as Record<string, unknown> };
}

/** A tool result's schema: structuredContent is one of the UCP schemas `roots` (files, with a fragment or not). */
export function ucpResponseSchema(roots: string[], description: string): Json {
  const { refs, defs } = bundled(roots);
  return { type: 'object', description, ...(refs.length === 1 ? refs[0] : { oneOf: refs }), $defs: defs };
}

/** A tool result's schema: structuredContent is a UCP checkout or UCP's error_response, as REST answers. */
export function ucpCheckoutResponseSchema(): Json {
  return ucpResponseSchema(
    ['shopping/checkout.json', 'shopping/types/error_response.json'],
    "A UCP checkout, or UCP's error_response (rest.openapi.json checkout_response); the same body the REST binding answers.",
  );
}

/** A tool's request schema by its name among the bindings' request schemas (src/protocols/requests.ts). */
export function ucpRequestSchemaOf(name: RequestSchemaName, description: string): Json {
  return { ...structuredClone(REQUEST_SCHEMAS[name]), description } as Json;
}

/** A UCP tool's `meta` argument, with the members a tool requires. */
export const ucpToolMeta = (required: string[]) => ({
  type: 'object',
  description:
    'Request metadata: `ucp-agent.profile` (the platform profile URL, as the UCP-Agent header) and `idempotency-key` (a UUID, as the Idempotency-Key header).',
  required,
  properties: {
    'ucp-agent': { type: 'object', required: ['profile'], properties: { profile: { type: 'string', format: 'uri' } } },
    'idempotency-key': { type: 'string', format: 'uuid' },
  },
});

/** The request schema of a UCP operation whose tool takes a `checkout` argument. */
export function ucpRequestSchema(op: 'create' | 'update' | 'complete', description: string): Json {
  return { ...structuredClone(REQUEST_SCHEMAS[`ucp.${op}`]), description } as Json;
}
