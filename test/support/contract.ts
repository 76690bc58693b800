// Validates every response a test receives against the bundled OpenAPI document: the status must be documented for
// the operation, every required header present and well-formed, the media type declared and the body valid.
// All test traffic goes through `contractFetch`, so no test can forget.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { loadDocument } from '../../src/document.js';

type Json = Record<string, any>;
const document = loadDocument() as Json;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema(document, 'openapi');

const validators = new Map<string, ValidateFunction>();
function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');

/** Follows a local `$ref` chain, returning the target and its JSON pointer. */
function resolve(node: Json, pointer: string): [Json, string] {
  while (node.$ref) {
    pointer = String(node.$ref).slice(1);
    node = pointer
      .split('/')
      .slice(1)
      .reduce((value: Json, segment) => value[segment.replaceAll('~1', '/').replaceAll('~0', '~')], document);
  }
  return [node, pointer];
}

const templates = Object.keys(document.paths).map((template) => ({
  template,
  pattern: new RegExp(`^${template.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g, '[^/]+')}$`),
}));

/**
 * The error shape each family of paths documents (the contract's description and each binding's own), written here
 * rather than asked of the application's router: a path the service routes to the wrong surface must fail the check.
 * First match wins; paths are compared decoded, without a trailing slash.
 */
const ERROR_SHAPES: Array<[RegExp, string]> = [
  [/^\/ucp(\/|$)|^\/\.well-known\/ucp$/, 'UcpError'],
  [/^\/acp(\/|$)|^\/\.well-known\/acp\.json$/, 'AcpError'],
  [/^\/(checkout-sessions|checkout_sessions)(\/|$)/, 'CheckoutError'],
  [/^\/(agent|oauth|\.well-known)(\/|$)/, 'OAuthError'],
  [/^\/(catalog|checkout)\/mcp$/, 'JsonRpcErrorResponse'],
  [/^/, 'ReadError'],
];

function errorSchemaFor(path: string): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    // Not valid percent-encoding: compared as sent.
  }
  if (decoded.length > 1) decoded = decoded.replace(/\/+$/, '');
  return ERROR_SHAPES.find(([pattern]) => pattern.test(decoded))![1];
}

export class ContractViolation extends Error {
  override name = 'ContractViolation';
}

function check(valid: boolean, message: string): void {
  if (!valid) throw new ContractViolation(message);
}

function validateHeaders(response: Response, headers: Json, where: string, pointer: string): void {
  for (const [name, raw] of Object.entries(headers ?? {})) {
    const [header, headerPointer] = resolve(raw as Json, `${pointer}/${escape(name)}`);
    const value = response.headers.get(name);
    if (value === null) {
      check(!header.required, `${where}: required header ${name} is missing`);
      continue;
    }
    const schema = resolve(header.schema, `${headerPointer}/schema`)[0];
    const typed = schema.type === 'integer' || schema.type === 'number' ? Number(value) : value;
    const validate = validatorAt(`${headerPointer}/schema`);
    check(validate(typed), `${where}: header ${name}: ${value} ${ajv.errorsText(validate.errors)}`);
  }
}

function validateBody(response: Response, text: string, responseObject: Json, where: string, pointer: string): void {
  const content = responseObject.content as Json | undefined;
  if (!content) {
    check(text === '', `${where}: documented without a body, but one was sent`);
    return;
  }
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!.trim();
  check(
    mediaType in content,
    `${where}: Content-Type ${mediaType || '(none)'} is not documented (${Object.keys(content).join(', ')})`,
  );
  if (!mediaType.endsWith('json')) return;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ContractViolation(`${where}: body is not JSON: ${text.slice(0, 200)}`);
  }
  const validate = validatorAt(`${pointer}/content/${escape(mediaType)}/schema`);
  check(
    validate(body),
    `${where}: body does not match the schema: ${ajv.errorsText(validate.errors)}\n${text.slice(0, 1000)}`,
  );
}

/**
 * Responses of paths or methods the document has no operation for: 404/405 in the surface's error shape, or the 429
 * the rate limit gives any request (the document's description covers both).
 */
function validateUnrouted(response: Response, text: string, path: string, where: string): void {
  check(
    [404, 405, 429].includes(response.status),
    `${where}: no documented operation, and the status ${response.status} is not 404/405/429`,
  );
  if (response.status === 429) check(response.headers.has('retry-after'), `${where}: 429 without Retry-After`);
  const schemaName = errorSchemaFor(path);
  const validate = validatorAt(`/components/schemas/${schemaName}`);
  check(validate(JSON.parse(text)), `${where}: body does not match ${schemaName}: ${ajv.errorsText(validate.errors)}`);
  if (response.status === 405) check(response.headers.has('allow'), `${where}: 405 without an Allow header`);
}

/** CORS preflights are answered by the CORS layer before any operation (see the document's description). */
function validatePreflight(response: Response, where: string): void {
  check(response.status === 204, `${where}: a CORS preflight must answer 204`);
  check(
    response.headers.get('access-control-allow-origin') === '*',
    `${where}: preflight without Access-Control-Allow-Origin`,
  );
  check(
    response.headers.has('access-control-allow-methods'),
    `${where}: preflight without Access-Control-Allow-Methods`,
  );
}

export function validateResponse(method: string, url: URL, response: Response, text: string): void {
  const where = `${method} ${url.pathname} → ${response.status}`;
  const path = url.pathname.length > 1 ? url.pathname.replace(/\/$/, '') : url.pathname; // a trailing slash is ignored
  const match = templates.find(({ pattern }) => pattern.test(path));
  // HEAD is answered as GET without a body (RFC 9110): it is checked against the GET operation, headers only.
  const operationMethod = method === 'HEAD' ? 'get' : method.toLowerCase();
  const operation = match && document.paths[match.template][operationMethod];
  // Only the MCP endpoints document their preflights (granted per origin); elsewhere the CORS layer answers them.
  if (method === 'OPTIONS' && response.status === 204 && !operation) return validatePreflight(response, where);
  if (!match || !operation) return validateUnrouted(response, text, url.pathname, where);
  const responsesPointer = `/paths/${escape(match.template)}/${operationMethod}/responses`;
  const raw = operation.responses[String(response.status)];
  check(raw !== undefined, `${where}: status ${response.status} is not documented for ${operation.operationId}`);
  const [responseObject, pointer] = resolve(raw, `${responsesPointer}/${response.status}`);
  validateHeaders(response, responseObject.headers, where, `${pointer}/headers`);
  if (method === 'HEAD') return check(text === '', `${where}: a HEAD response must have no body`);
  validateBody(response, text, responseObject, where, pointer);
}

/** fetch, plus contract validation of the response. The returned Response can still be read. */
export async function contractFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const request = new Request(input, init);
  const response = await fetch(request);
  const text = await response.text();
  validateResponse(request.method, new URL(request.url), response, text);
  // An empty body is none: a Response made from '' would be given a Content-Type the service never sent.
  return new Response([204, 304].includes(response.status) || text === '' ? null : text, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** fetch with contract validation, for tests that talk to child processes: status, headers and the parsed body. */
export async function call(url: string, init?: RequestInit): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, init);
  const text = await response.text();
  validateResponse(init?.method ?? 'GET', new URL(url), response, text);
  return {
    status: response.status,
    body: text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text,
    headers: response.headers,
  };
}

/** A JSON POST for `call`. */
export const json = (body: unknown, headers: Record<string, string> = {}) => ({
  method: 'POST',
  headers: { 'Content-Type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
