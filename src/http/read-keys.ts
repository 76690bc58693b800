// The read cache's keys: what a cacheable read means, not how it was spelled. Keyed by the raw URL, the cache missed
// for every re-encoding (`%2Avariants…`, `*%76ariants…`), reordering or default spelled out, so anyone could make each
// read a database read (issue #29). A key is the operation and each of its parameters' values as the handler takes
// them: path parameters percent-decoded, query parameters parsed as Koa parses them (WHATWG URLSearchParams: `+` is a
// space), in any order, coerced by the contract's schemas (`limit=012` is 12), the contract's default for one left
// out (`limit` 12, `offset` 0), and `fields` as the selection it makes (src/domain/fields.ts): order, repeats and
// empty tokens do not count. Spellings the contract refuses (a repeated or unknown parameter, an empty `handle`) have
// no key here, and a refused request is never stored, so no refused spelling is ever served an entry.
//
// Two callers, one key: the read cache's step (src/http/caching.ts readCacheStep), before the operation's validation,
// keys the raw request target (ofTarget), repeating the contract's checks of the query with its own schemas, cheaply;
// the handler wrapper keys the input the contract validated (ofInput). A target whose meaning it cannot tell exactly
// as the contract would (a literal segment percent-encoded, which the contract's validator treats apart) has no key
// there and goes on to the operation, which keys what it validated: a hit there still costs no database read. Keying a target costs
// microseconds (parsing, the schemas, the field selection), a sizeable part of a cached answer's 40 µs, so the keys of
// the targets seen last are kept: the usual spellings cost one lookup, as when the cache was keyed by the URL.
import type { ValidateFunction } from 'ajv';
import type { CacheableOperation } from './caching.js';
import type { ReadKeys, TargetRead } from '../ports.js';
import type { Contract } from './openapi.js';
import { fieldSelectionKey, parseFieldSelection } from '../domain/fields.js';

/** Parameters whose value means more than its text: each gives the value's meaning, or throws for a refused one. */
const MEANINGS: Record<string, (value: unknown) => unknown> = {
  // The catalogue's field selection: the fields it selects, whatever the order or repetition of its tokens.
  fields: (value) => fieldSelectionKey(parseFieldSelection(value as string | undefined)),
};

/** How many targets' keys are kept (first in, first out), and the longest target kept: a few hundred kB at most. */
const KEPT_TARGETS = 1_000;
const KEPT_TARGET_LENGTH = 512;

interface ParameterObject {
  in: string;
  name: string;
  required?: boolean;
  schema?: { default?: unknown };
}

interface KeyedParameter {
  name: string;
  default: unknown;
  meaning: ((value: unknown) => unknown) | undefined;
}

interface KeyedOperation {
  operationId: string;
  /** The path template's segments after the leading `/`: literal text, or the index of a path parameter. */
  segments: Array<string | number>;
  pathNames: string[];
  path: KeyedParameter[];
  query: KeyedParameter[];
  /** The contract's checks of the path and query parameters, coercing as its validator does. */
  validatePath: ValidateFunction;
  validateQuery: ValidateFunction;
}

function objectSchema(parameters: ParameterObject[]): object {
  return {
    type: 'object',
    properties: Object.fromEntries(parameters.map((parameter) => [parameter.name, parameter.schema ?? {}])),
    required: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
    additionalProperties: false,
  };
}

function keyed(parameter: ParameterObject): KeyedParameter {
  return { name: parameter.name, default: parameter.schema?.default, meaning: MEANINGS[parameter.name] };
}

/** Trailing slashes count for nothing, as the contract's router ignores them (openapi.ts routedPath). */
function withoutTrailingSlashes(path: string): string {
  let end = path.length;
  while (end > 1 && path.charCodeAt(end - 1) === 0x2f) end--;
  return end === path.length ? path : path.slice(0, end);
}

export function readKeys(contract: Contract, cacheable: CacheableOperation[]): ReadKeys {
  const { validators } = contract.options;
  const operations = new Map<string, KeyedOperation>();
  for (const { operationId, path } of cacheable) {
    const parameters = (contract.api.getOperation(operationId)?.parameters ?? []) as ParameterObject[];
    const inPath = parameters.filter((parameter) => parameter.in === 'path');
    const inQuery = parameters.filter((parameter) => parameter.in === 'query');
    const pathNames: string[] = [];
    const segments = path
      .slice(1)
      .split('/')
      .map((segment) => {
        const name = /^\{([^}]+)\}$/.exec(segment)?.[1];
        if (name === undefined) return segment;
        pathNames.push(name);
        return pathNames.length - 1;
      });
    operations.set(operationId, {
      operationId,
      segments,
      pathNames,
      path: inPath.map(keyed),
      query: inQuery.map(keyed),
      validatePath: validators.validator('coercing', `read-key:${operationId}:path`, objectSchema(inPath)),
      validateQuery: validators.validator('coercing', `read-key:${operationId}:query`, objectSchema(inQuery)),
    });
  }
  const all = [...operations.values()];

  /** The key of coerced, valid values; undefined when a value's meaning refuses it (an unknown field). */
  function keyOf(operation: KeyedOperation, path: Record<string, unknown>, query: Record<string, unknown>) {
    const values: unknown[] = [];
    try {
      for (const parameter of operation.path) values.push(path[parameter.name]);
      for (const parameter of operation.query) {
        const value = query[parameter.name] ?? parameter.default;
        values.push(parameter.meaning ? parameter.meaning(value) : value);
      }
    } catch {
      return undefined;
    }
    // A space: never a request target, so never one of the MCP tools' keys either (caching.ts fetchValue).
    return `GET ${operation.operationId} ${JSON.stringify(values)}`;
  }

  /** The operation whose template the path spells with literal segments as they are, and its decoded parameters. */
  function route(path: string): { operation: KeyedOperation; params: Record<string, string> } | undefined {
    const segments = withoutTrailingSlashes(path).slice(1).split('/');
    candidates: for (const operation of all) {
      if (operation.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      for (let index = 0; index < segments.length; index++) {
        const expected = operation.segments[index]!;
        const segment = segments[index]!;
        if (typeof expected === 'string') {
          if (segment !== expected) continue candidates;
        } else {
          let value = segment;
          if (segment.includes('%')) {
            try {
              value = decodeURIComponent(segment);
            } catch {
              return undefined;
            }
          }
          if (value === '') return undefined;
          params[operation.pathNames[expected]!] = value;
        }
      }
      return { operation, params };
    }
    return undefined;
  }

  function readOf(url: string): TargetRead | undefined {
    const mark = url.indexOf('?');
    const routed = route(mark < 0 ? url : url.slice(0, mark));
    if (!routed) return undefined;
    const { operation, params } = routed;
    // Parsed as Koa parses `ctx.query`: a repeated parameter becomes a list, which no cacheable parameter accepts.
    // No prototype: a parameter named `__proto__` is a parameter (an unknown one), as in Koa's parse.
    const query = Object.create(null) as Record<string, string | string[]>;
    if (mark >= 0 && mark < url.length - 1) {
      for (const [name, value] of new URLSearchParams(url.slice(mark + 1))) {
        const earlier = query[name];
        query[name] = earlier === undefined ? value : Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
      }
    }
    if (!operation.validatePath(params) || !operation.validateQuery(query)) return undefined;
    const key = keyOf(operation, params, query);
    return key === undefined ? undefined : { operationId: operation.operationId, key };
  }

  // A pure function of the target, so a kept read is the read. Only reads are kept: the other targets (session ids,
  // refused queries) would push them out.
  const kept = new Map<string, TargetRead>();
  return {
    ofInput(operationId, input) {
      const operation = operations.get(operationId);
      return operation && keyOf(operation, input.path, input.query);
    },
    ofTarget(url) {
      const known = kept.get(url);
      if (known) return known;
      const read = readOf(url);
      if (read && url.length <= KEPT_TARGET_LENGTH) {
        if (kept.size >= KEPT_TARGETS) kept.delete(kept.keys().next().value!);
        kept.set(url, read);
      }
      return read;
    },
  };
}
