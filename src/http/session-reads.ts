// Checkout session reads answered before Koa. A GET or HEAD of /checkout_sessions/{id} (or its alias,
// /checkout-sessions/{id}) whose id and headers the contract accepts is answered here with every step the checkout
// surface applies (src/http/surfaces.ts), written lean (src/http/lean.ts, shared with cached reads and cached MCP tool
// calls): request id and log line, security headers, CORS, the limit by address, API-Version resolved (a 400 when no
// version applies) and echoed, `no-store`, errors in the checkout shape. The session comes from the service function
// the general chain's handler calls (getCheckoutSession), so both present it alike. A request this path could not
// answer exactly as the general chain would goes to it untouched: while draining, on a retiring endpoint, with a query
// string, a trailing slash, an escaped or malformed id, a body, a header the contract rejects.
// test/session-reads.test.ts diffs both paths on the same requests.
import type { IncomingMessage } from 'node:http';
import type { ValidateFunction } from 'ajv';
import type { WebDeps as Deps } from './web-deps.js';
import { deprecationsFor } from '../domain/versioning.js';
import { getCheckoutSession } from '../services/checkout.js';
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
import { contractAjv, type Contract } from './openapi.js';
import { surfaceOf } from './surfaces.js';
import { appliedApiVersion } from './versioning.js';

export interface SessionReadParts extends LeanParts {
  deps: Deps;
  contract: Contract;
}

/** The operations answered here: one session by id, at each spelling of the path. */
const SESSION_READS = ['getCheckoutSession', 'getCheckoutSessionAlias'];

/**
 * Characters that read the same percent-decoded and that no router treats apart (RFC 3986 unreserved): an id made of
 * them is the path parameter the general chain's router would hand its validator, as sent.
 */
const UNRESERVED = /^[A-Za-z0-9._~-]+$/;

interface SessionRoute {
  /** The path up to the id, e.g. `/checkout_sessions/`. */
  prefix: string;
  id: ValidateFunction;
  headers: HeaderParameter[];
}

/** Each operation's path and the contract's checks of its parameters; a contract this path cannot follow stops the start. */
function sessionRoutes(contract: Contract): SessionRoute[] {
  const ajv = contractAjv();
  return SESSION_READS.map((operationId) => {
    const operation = contract.api.getOperation(operationId);
    const prefix = operation && /^(\/[^{}]+\/)\{id\}$/.exec(operation.path)?.[1];
    if (!operation || operation.method !== 'get' || !prefix)
      throw new Error(`${operationId} is answered before Koa as GET <path>/{id}, but the contract says otherwise`);
    // surfaces.ts routes the path to the checkout surface, whose steps this path repeats; any other would differ.
    const surface = surfaceOf('GET', `${prefix}x`);
    if (surface !== 'checkout') throw new Error(`${operationId} is on the ${surface} surface, not checkout`);
    const parameters = operationParameters(contract, operationId, ajv);
    const id = parameters.find((parameter) => parameter.in === 'path' && parameter.name === 'id');
    const headers = parameters.filter((parameter) => parameter.in === 'header');
    // A query parameter would be checked by the contract on every request, and a request without one may be refused.
    if (!id || headers.length + 1 !== parameters.length)
      throw new Error(`${operationId} takes parameters other than its id and headers: answer it through Koa`);
    return { prefix, id: id.validate, headers };
  });
}

/**
 * Answers checkout session reads before Koa; passes every other request to `general` (the next listener), and so
 * does a session read this path could not answer exactly as the general chain would.
 */
export function sessionReadsFirst(parts: SessionReadParts, general: RequestListener): RequestListener {
  const { deps } = parts;
  const { lifecycle, deprecations } = deps;
  const routes = sessionRoutes(parts.contract);
  const respond = leanResponder(parts);

  function servable(req: IncomingMessage, path: string, route: SessionRoute, id: string): boolean {
    if (!UNRESERVED.test(id) || !route.id(id)) return false;
    // A body the general chain would read (and then ignore) before answering.
    if (req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) return false;
    if (deprecations.length > 0 && deprecationsFor(req.method!, path, deprecations).length > 0) return false;
    return admitsHeaders(req, route.headers);
  }

  /** The checkout surface's version step, then the operation's handler. */
  async function session(req: IncomingMessage, id: string, headers: string[]): Promise<LeanAnswer> {
    headers.push('API-Version', appliedApiVersion(req.headers['api-version'] as string | undefined));
    const payload = JSON.stringify(await getCheckoutSession(deps, id));
    headers.push('Cache-Control', 'no-store');
    return { status: 200, body: { payload, contentType: JSON_TYPE } };
  }

  return (req, res) => {
    const started = performance.now();
    const path = req.url ?? '';
    const route =
      (req.method === 'GET' || req.method === 'HEAD') && !lifecycle.draining
        ? routes.find((candidate) => path.startsWith(candidate.prefix))
        : undefined;
    const id = route ? path.slice(route.prefix.length) : '';
    if (!route || !servable(req, path, route, id)) return general(req, res);
    respond(req, res, {
      path,
      shape: 'checkout',
      surfaceHeaders: PUBLIC_CORS_RESPONSE_HEADERS,
      started,
      answer: (headers) => session(req, id, headers),
    });
  };
}
