// Session creates answered before Koa, on the checkout surface and on each protocol binding that is on, by one
// pipeline (the lean responder, src/http/lean.ts) with each surface's own steps.
//
// Checkout: a POST to /checkout_sessions (or its alias, /checkout-sessions) with a JSON body and headers the contract
// accepts is answered with every step the checkout surface applies (src/http/surfaces.ts): request id and log line,
// security headers, CORS, the limit by address, API-Version resolved (a 400 when no version applies) and echoed, the
// body read by parseBodies' own reader and limits (src/http/body.ts: 413, nesting depth, malformed JSON), then
// validated by the contract's own compiled validator and refused in the general chain's words (src/http/openapi.ts),
// `no-store`, errors in the checkout shape. The session comes from the service functions the general chain's handler
// calls (src/handlers/checkout), replays and idempotency errors included. Koa's context, koa-compose, the body parser's
// middleware and openapi-backend's request parsing were a large part of a create's CPU (issue #15). A request this path
// could not answer exactly as the general chain would goes to it untouched: while draining, on a retiring endpoint,
// with a query string or a trailing slash, chunked or compressed, with any Content-Type but plain JSON, with a header
// the contract rejects.
//
// UCP and ACP: a POST to /ucp/checkout-sessions or /acp/checkout_sessions is answered by the binding's own checkout
// steps (src/http/ucp.ts, acp.ts), the very functions its Koa route runs, given the request through a ProtocolExchange
// over the headers collected here: the binding's checks in its order, its body reader, its errors, its idempotency.
// What the general chain adds around a binding is the lean responder's own steps, plus `no-store` and ACP's opening
// headers. A query string or a trailing slash, and anything while draining, go to the general chain.
// test/session-creates.test.ts and test/protocol-creates.test.ts diff both paths on the same requests.
import type { IncomingMessage } from 'node:http';
import type { ValidateFunction } from 'ajv';
import type { Operation } from 'openapi-backend';
import type { Deps } from '../deps.js';
import { deprecationsFor } from '../domain/versioning.js';
import type { CheckoutSession } from '../services/checkout.js';
import { createCheckoutSession, createCheckoutSessionIdempotently } from '../services/checkout/create.js';
import { readJsonBody } from './body.js';
import { JSON_TYPE } from './caching.js';
import { PUBLIC_CORS_RESPONSE_HEADERS } from './cors.js';
import {
  admitsHeaders,
  headerOf,
  leanResponder,
  operationParameters,
  setHeader,
  type HeaderParameter,
  type LeanAnswer,
  type LeanParts,
  type LeanRequest,
  type RequestListener,
} from './lean.js';
import { contractAjv, validationFailed, type Contract, type OperationInput } from './openapi.js';
import { setAnswerHeaders, type ProtocolBinding, type ProtocolExchange } from './protocol-io.js';
import type { ProtocolBindings } from './protocols.js';
import { surfaceOf } from './surfaces.js';
import { appliedApiVersion } from './versioning.js';

export interface SessionCreateParts extends LeanParts {
  deps: Deps;
  contract: Contract;
  protocols: ProtocolBindings;
}

/**
 * A surface's session create, at one path: whether this path may answer a request, and its steps. `path`, `shape` and
 * `surfaceHeaders` are the lean responder's (LeanRequest).
 */
interface LeanCreate extends Pick<LeanRequest, 'path' | 'shape'> {
  /** Headers the surface sends on every answer, failures included, from before the limit is counted. */
  surfaceHeaders(req: IncomingMessage): LeanRequest['surfaceHeaders'];
  /** Whether the request can be answered here exactly as the general chain would answer it. */
  servable(req: IncomingMessage): boolean;
  /** The surface's steps once the request is counted (`ip` is the client's address): an answer, or a failure thrown. */
  create(req: IncomingMessage, headers: string[], ip: string): Promise<LeanAnswer>;
}

/** The operations answered here: a session created, at each spelling of the path. */
const SESSION_CREATES = ['createCheckoutSession', 'createCheckoutSessionAlias'];

/** The one media type the operations take, as clients spell it; any other spelling is the general chain's to judge. */
const JSON_MEDIA_TYPE = 'application/json';
const PLAIN_JSON = new Set([JSON_MEDIA_TYPE, `${JSON_MEDIA_TYPE}; charset=utf-8`, `${JSON_MEDIA_TYPE};charset=utf-8`]);

/** The body the contract declares, as codegen types it. */
type CreateBody = OperationInput<'createCheckoutSession'>['body'];

interface CreateRoute {
  path: string;
  operation: Operation;
  headers: HeaderParameter[];
  /** The contract's own validator of the operation's body (given `{ requestBody }`), as openapi-backend compiled it. */
  body: ValidateFunction;
}

/** What the contract's validator of a create's body admits is that body, as codegen declares it. */
function isCreateRequest(
  route: CreateRoute,
  request: { requestBody: unknown },
): request is { requestBody: CreateBody } {
  return route.body(request);
}

/** Whether a validator openapi-backend compiled for a request checks its body (its `requestBody` property). */
function validatesRequestBody(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null || !('properties' in schema)) return false;
  const { properties } = schema;
  return typeof properties === 'object' && properties !== null && Object.hasOwn(properties, 'requestBody');
}

/** Each operation's path and the contract's checks of its request; a contract this path cannot follow stops the start. */
function createRoutes(contract: Contract): CreateRoute[] {
  const ajv = contractAjv();
  return SESSION_CREATES.map((operationId) => {
    const operation = contract.api.getOperation(operationId);
    if (!operation || operation.method !== 'post' || operation.path.includes('{'))
      throw new Error(`${operationId} is answered before Koa as POST <path>, but the contract says otherwise`);
    // surfaces.ts routes the path to the checkout surface, whose steps this path repeats; any other would differ.
    const surface = surfaceOf('POST', operation.path);
    if (surface !== 'checkout') throw new Error(`${operationId} is on the ${surface} surface, not checkout`);
    // The general chain would check credentials first, and the media type against each the operation takes.
    if ((operation.security ?? []).length > 0)
      throw new Error(`${operationId} requires credentials: answer it through Koa`);
    const { requestBody } = operation;
    const content = requestBody && 'content' in requestBody ? Object.keys(requestBody.content) : [];
    if (content.join() !== JSON_MEDIA_TYPE) throw new Error(`${operationId} takes a body other than JSON alone`);
    const parameters = operationParameters(contract, operationId, ajv);
    // A query parameter would be checked by the contract on every request, and a request without one may be refused.
    if (parameters.some((parameter) => parameter.in !== 'header'))
      throw new Error(`${operationId} takes parameters other than headers: answer it through Koa`);
    const body = contract.api.validator
      .getRequestValidatorsForOperation(operationId)
      .find((validate) => validatesRequestBody(validate.schema));
    if (!body) throw new Error(`the contract compiled no body validator for ${operationId}`);
    return { path: operation.path, operation, headers: parameters, body };
  });
}

/** The checkout surface's creates: its version step, the body's reading and validation, then the handler's services. */
function checkoutCreates({ deps, contract }: SessionCreateParts): LeanCreate[] {
  const { deprecations } = deps;
  const surfaceHeaders = () => PUBLIC_CORS_RESPONSE_HEADERS;

  function servable(req: IncomingMessage, route: CreateRoute): boolean {
    const { headers } = req;
    // A body the general chain's reader would inflate, or read in chunks of unknown length.
    if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
    if (!PLAIN_JSON.has(headers['content-type']?.toLowerCase() ?? '')) return false;
    if (deprecations.length > 0 && deprecationsFor('POST', route.path, deprecations).length > 0) return false;
    return admitsHeaders(req, route.headers);
  }

  async function create(req: IncomingMessage, route: CreateRoute, headers: string[]): Promise<LeanAnswer> {
    const applied = appliedApiVersion(headerOf(req, 'api-version'));
    // Where the version is, for a replay to answer the one it was first given under.
    const version = headers.push('API-Version', applied) - 1;
    const request = { requestBody: await readJsonBody(req) };
    if (!isCreateRequest(route, request)) validationFailed(route.operation, route.body.errors ?? []);
    const key = headerOf(req, 'idempotency-key');
    // As the handler: under an Idempotency-Key, a replay answers the stored body and API version.
    if (!key) return created(await createCheckoutSession(deps, request.requestBody), headers);
    const creation = await createCheckoutSessionIdempotently(deps, request.requestBody, key, applied);
    if (creation.replayed) {
      headers[version] = creation.apiVersion;
      headers.push('Idempotent-Replayed', 'true');
    }
    return created(creation.session, headers);
  }

  function created(session: CheckoutSession, headers: string[]): LeanAnswer {
    headers.push('Cache-Control', 'no-store');
    return { status: 201, body: { payload: JSON.stringify(session), contentType: JSON_TYPE } };
  }

  return createRoutes(contract).map((route) => ({
    path: route.path,
    shape: 'checkout',
    surfaceHeaders,
    servable: (req) => servable(req, route),
    create: (req, headers) => create(req, route, headers),
  }));
}

/** What the general chain sets before any surface's step: `no-store`, which an answer may replace. */
const NO_STORE: [string, string] = ['Cache-Control', 'no-store'];

/**
 * A binding's create: its opening headers and its checkout steps, the ones its Koa route runs, given the request and
 * the headers collected here. Its steps judge every header and media type themselves, so each request is theirs.
 */
function protocolCreate(binding: ProtocolBinding): LeanCreate {
  const { createPath: path } = binding;
  const get = (req: IncomingMessage) => (name: string) => headerOf(req, name.toLowerCase()) || '';
  return {
    path,
    shape: binding.failure,
    surfaceHeaders: (req) => [NO_STORE, ...binding.opening({ get: get(req) })],
    servable: () => true,
    async create(req, headers, ip) {
      const exchange: ProtocolExchange = {
        method: 'POST',
        path,
        req,
        ip,
        get: get(req),
        set: (name, value) => setHeader(headers, name, value),
      };
      const answer = await binding.serveCheckout(exchange);
      setAnswerHeaders(exchange, answer);
      return { status: answer.response.status, body: { payload: answer.response.body, contentType: JSON_TYPE } };
    },
  };
}

/**
 * Answers session creates before Koa; passes every other request to `general` (the next listener), and so does a
 * session create this path could not answer exactly as the general chain would.
 */
export function sessionCreatesFirst(parts: SessionCreateParts, general: RequestListener): RequestListener {
  const { lifecycle } = parts.deps;
  const creates = new Map<string, LeanCreate>();
  for (const create of checkoutCreates(parts)) creates.set(create.path, create);
  for (const binding of Object.values(parts.protocols)) creates.set(binding.createPath, protocolCreate(binding));
  const respond = leanResponder(parts);

  return (req, res) => {
    const started = performance.now();
    const create = req.method === 'POST' && !lifecycle.draining ? creates.get(req.url ?? '') : undefined;
    if (!create || !create.servable(req)) return general(req, res);
    respond(req, res, {
      path: create.path,
      shape: create.shape,
      surfaceHeaders: create.surfaceHeaders(req),
      started,
      answer: (headers, ip) => create.create(req, headers, ip),
    });
  };
}
