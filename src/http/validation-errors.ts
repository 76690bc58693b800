// Turns Ajv errors from openapi-backend's request validation into one clear message naming the offending parameter
// or body field (`limit`, `items[0].quantity`, `Content-Type`).
import type { ErrorObject } from 'ajv';

export interface ValidationProblem {
  param: string;
  message: string;
  kind: 'missing' | 'unknown' | 'invalid' | 'malformed_json';
}

/** `/requestBody/items/0/quantity` → `items[0].quantity`; `/query/limit` → `limit`. */
export function paramPath(instancePath: string, child?: string): string {
  const segments = instancePath
    .split('/')
    .slice(1)
    .map((segment) => segment.replaceAll('~1', '/').replaceAll('~0', '~'));
  const [location, ...rest] = segments;
  if (child !== undefined) rest.push(child);
  if (rest.length === 0) return location === 'requestBody' ? 'body' : (location ?? 'body');
  return rest.reduce(
    (path, segment) => (/^\d+$/.test(segment) ? `${path}[${segment}]` : path ? `${path}.${segment}` : segment),
    '',
  );
}

function describe(error: ErrorObject): ValidationProblem {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'parse':
      return { param: 'body', message: `The body is not valid JSON: ${error.message}`, kind: 'malformed_json' };
    case 'required': {
      const param = paramPath(error.instancePath, String(params.missingProperty));
      return { param, message: `${param} is required.`, kind: 'missing' };
    }
    case 'additionalProperties': {
      const param = paramPath(error.instancePath, String(params.additionalProperty));
      return { param, message: `${param} is not a recognised parameter.`, kind: 'unknown' };
    }
    case 'anyOf':
    case 'oneOf': {
      const param = paramPath(error.instancePath);
      return {
        param,
        message: `${param} does not match any accepted form; see the schema in the API reference.`,
        kind: 'invalid',
      };
    }
    default: {
      const param = paramPath(error.instancePath);
      return { param, message: `${param} ${error.message ?? 'is invalid'}.`, kind: 'invalid' };
    }
  }
}

// When several errors are reported, the most specific one is the most useful: a `required` or type error inside
// an `anyOf` branch says less than the anyOf itself, so branch errors are skipped in favour of their parent.
export function mostSpecificError(errors: ErrorObject[]): ErrorObject {
  const composite = errors.find((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const direct = errors.find(
    (error) => !composite || !error.schemaPath.startsWith(composite.schemaPath.replace(/\/(anyOf|oneOf)$/, '/$1/')),
  );
  return direct ?? composite ?? errors[0]!;
}

export function firstProblem(errors: ErrorObject[]): ValidationProblem {
  return describe(mostSpecificError(errors));
}
