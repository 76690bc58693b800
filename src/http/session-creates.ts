// Checkout session creates answered before Koa. A POST to /checkout_sessions (or its alias, /checkout-sessions) with a
// JSON body and headers the contract accepts is answered here with every step the checkout surface applies
// (src/http/surfaces.ts), written lean (src/http/lean.ts): request id and log line, security headers, CORS, the limit by
// address, API-Version resolved (a 400 when no version applies) and echoed, the body read by parseBodies' own reader
// and limits (src/http/body.ts: 413, nesting depth, malformed JSON), then validated by the contract's own compiled
// validator and refused in the general chain's words (src/http/openapi.ts), `no-store`, errors in the checkout shape.
// The session comes from the service functions the general chain's handler calls (src/handlers/checkout), replays and
// idempotency errors included. Koa's context, koa-compose, the body parser's middleware and openapi-backend's request
// parsing were a large part of a create's CPU (issue #15). A request this path could not answer exactly as the general
// chain would goes to it untouched: while draining, on a retiring endpoint, with a query string or a trailing slash,
// chunked or compressed, with any Content-Type but plain JSON, with a header the contract rejects.
// test/session-creates.test.ts diffs both paths on the same requests.
import type { IncomingMessage } from 'node:http';
import type { ValidateFunction } from 'ajv';
import type { Operation } from 'openapi-backend';
import type { Deps } from '../deps.js';
import { deprecationsFor } from '../domain/versioning.js';
import {
  createCheckoutSession,
  createCheckoutSessionIdempotently,
  type CheckoutSession,
} from '../services/checkout.js';
import { readJsonBody } from './body.js';
import { JSON_TYPE } from './caching.js';
import { PUBLIC_CORS_RESPONSE_HEADERS } from './cors.js';
import {
  admitsHeaders,
  leanResponder,
  operationParameters,
  type HeaderParameter,
  type LeanAnswer,
  type LeanParts,
  type RequestListener,
} from './lean.js';
import { contractAjv, validationFailed, type Contract, type OperationInput } from './openapi.js';
import { surfaceOf } from './surfaces.js';
import { appliedApiVersion } from './versioning.js';

export interface SessionCreateParts extends LeanParts {
  deps: Deps;
  contract: Contract;
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
  body: ValidateFunction<{ requestBody: CreateBody }>;
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
    const content = Object.keys((operation.requestBody as { content?: object } | undefined)?.content ?? {});
    if (content.join() !== JSON_MEDIA_TYPE) throw new Error(`${operationId} takes a body other than JSON alone`);
    const parameters = operationParameters(contract, operationId, ajv);
    // A query parameter would be checked by the contract on every request, and a request without one may be refused.
    if (parameters.some((parameter) => parameter.in !== 'header'))
      throw new Error(`${operationId} takes parameters other than headers: answer it through Koa`);
    const body = contract.api.validator
      .getRequestValidatorsForOperation(operationId)
      .find((validate) => Object.hasOwn((validate.schema as { properties?: object }).properties ?? {}, 'requestBody'));
    if (!body) throw new Error(`the contract compiled no body validator for ${operationId}`);
    // What the validator of the operation's body admits is that body, as codegen declares it.
    return { path: operation.path, operation, headers: parameters, body: body as CreateRoute['body'] };
  });
}

/**
 * Answers checkout session creates before Koa; passes every other request to `general` (the next listener), and so
 * does a session create this path could not answer exactly as the general chain would.
 */
export function sessionCreatesFirst(parts: SessionCreateParts, general: RequestListener): RequestListener {
  const { deps } = parts;
  const { lifecycle, deprecations } = deps;
  const routes = createRoutes(parts.contract);
  const respond = leanResponder(parts);

  function servable(req: IncomingMessage, route: CreateRoute): boolean {
    const { headers } = req;
    // A body the general chain's reader would inflate, or read in chunks of unknown length.
    if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
    if (!PLAIN_JSON.has(headers['content-type']?.toLowerCase() ?? '')) return false;
    if (deprecations.length > 0 && deprecationsFor('POST', route.path, deprecations).length > 0) return false;
    return admitsHeaders(req, route.headers);
  }

  /** The checkout surface's version step, the body's reading and validation, then the operation's handler. */
  async function create(req: IncomingMessage, route: CreateRoute, headers: string[]): Promise<LeanAnswer> {
    const applied = appliedApiVersion(req.headers['api-version'] as string | undefined);
    // Where the version is, for a replay to answer the one it was first given under.
    const version = headers.push('API-Version', applied) - 1;
    const request = { requestBody: await readJsonBody(req) };
    if (!route.body(request)) validationFailed(route.operation, route.body.errors ?? []);
    const key = req.headers['idempotency-key'] as string | undefined;
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

  return (req, res) => {
    const started = performance.now();
    const route =
      req.method === 'POST' && !lifecycle.draining ? routes.find(({ path }) => path === req.url) : undefined;
    if (!route || !servable(req, route)) return general(req, res);
    respond(req, res, {
      path: route.path,
      shape: 'checkout',
      surfaceHeaders: PUBLIC_CORS_RESPONSE_HEADERS,
      started,
      answer: (headers) => create(req, route, headers),
    });
  };
}
