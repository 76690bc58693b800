// The contract at runtime: openapi-backend routes each request of the bundled OpenAPI 3.1 document to the handler of
// its operationId, after validating it with Ajv 2020-12 (+ ajv-formats). Unknown paths, wrong methods and invalid
// requests become the domain's errors (src/domain/errors.ts).
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { LRUCache } from 'lru-cache';
import {
  OpenAPIBackend,
  type Context,
  type Document,
  type Handler,
  type Operation,
  type Request,
} from 'openapi-backend';
import type { operations } from '../../codegen/types.js';
import type { McpOperationId } from '../mcp/index.js';
import type { ProtocolOperationId } from './protocols.js';
import type { AppContext, AppMiddleware } from './context.js';
import {
  BadRequest,
  MethodNotAllowed,
  Unauthorized,
  UnknownEndpoint,
  type BadRequestReason,
} from '../domain/errors.js';
import { isDecodable } from './errors.js';
import { firstProblem, type ValidationProblem } from './validation-errors.js';

/** Operations this dispatcher serves. The MCP operations are documented in the contract but answered by src/mcp first. */
export type OperationId = Exclude<keyof operations, McpOperationId | ProtocolOperationId>;

type Parameters<Id extends OperationId> = operations[Id]['parameters'];
/** What codegen declares, or `Absent` where it declares nothing (`never`). */
type Declared<T, Absent> = [NonNullable<T>] extends [never] ? Absent : NonNullable<T>;
type ContentOf<Message> = Message extends { content: infer Content } ? Content[keyof Content] : null;
type Responses<Id extends OperationId> = operations[Id]['responses'];
type SuccessStatus<Id extends OperationId> = Extract<keyof Responses<Id>, 200 | 201 | 202 | 204>;

/** An operation's request as the contract validated it: path and query parameters (coerced to their types) and body. */
export type OperationInput<Id extends OperationId> = Id extends OperationId
  ? {
      path: Declared<Parameters<Id>['path'], Record<string, never>>;
      query: Declared<Parameters<Id>['query'], Record<string, never>>;
      /** Absent for an operation that takes none (a body sent to it is ignored). */
      body: Declared<ContentOf<NonNullable<operations[Id]['requestBody']>>, undefined>;
    }
  : never;

/** A documented success status of the operation and its body (`null` for one without content). */
export type OperationReply<Id extends OperationId> = {
  [Status in SuccessStatus<Id>]: { status: Status; body: ContentOf<Responses<Id>[Status]> };
}[SuccessStatus<Id>];

/**
 * Answers with a reply, or returns nothing when it wrote the response itself (a cacheable representation, a page, a
 * redirect) or when it can only fail.
 */
export type OperationHandler<Id extends OperationId> = Id extends OperationId
  ? (input: OperationInput<Id>, ctx: AppContext) => Promise<OperationReply<Id> | void> | OperationReply<Id> | void
  : never;

export type OperationHandlers = { [Id in OperationId]: OperationHandler<Id> };
export type SecurityHandlers = Record<string, (c: Context, ctx: AppContext) => unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'patch'] as const;

const VALIDATION_REASONS: Record<ValidationProblem['kind'], BadRequestReason> = {
  missing: 'missing_field',
  unknown: 'unknown_field',
  invalid: 'invalid_field',
  malformed_json: 'invalid_body',
};

/** Header parameters are validated under lower-cased names; errors name them as the contract spells them. */
function canonicalParam(c: Context, param: string): string {
  const parameters = (c.operation.parameters ?? []) as Array<{ name: string; in: string }>;
  return (
    parameters.find((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === param)?.name ?? param
  );
}

function validationFailed(c: Context): never {
  const problem = firstProblem(c.validation.errors ?? []);
  const param = canonicalParam(c, problem.param);
  throw new BadRequest(VALIDATION_REASONS[problem.kind], problem.message.replace(problem.param, param), { param });
}

/** Media type of the request body (no parameters), lowercase. */
function mediaType(ctx: AppContext): string {
  return (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase();
}

/** openapi-backend does not enforce Content-Type; a body sent as anything but a declared media type is a 400. */
function requireDeclaredMediaType(c: Context, ctx: AppContext): void {
  const requestBody = c.operation.requestBody as { content?: Record<string, unknown>; required?: boolean } | undefined;
  if (!requestBody?.content) return;
  const hasBody = Boolean(ctx.request.length) || ctx.get('Transfer-Encoding') !== '';
  if (!hasBody && !requestBody.required) return;
  const accepted = Object.keys(requestBody.content);
  const sent = mediaType(ctx);
  if (!accepted.includes(sent)) {
    throw new BadRequest(
      'invalid_content_type',
      `Content-Type must be ${accepted.join(' or ')}${sent ? `, not ${sent}` : ''}.`,
      { param: 'Content-Type' },
    );
  }
}

type Reply = { status: number; body: unknown } | void;

/** Any operation's handler, as the dispatcher calls it with the input the contract has validated. */
export type ContractHandler = (input: { path: any; query: any; body: any }, ctx: AppContext) => Promise<Reply> | Reply;

/** Sends a handler's reply (one that returned none has answered already). */
export function answer(ctx: AppContext, reply: Reply): void {
  if (!reply) return;
  // Body first: Koa turns a null body into a 204 unless the status is set after it.
  ctx.body = reply.body;
  ctx.status = reply.status;
}

function contractHandlers(handlers: OperationHandlers): Record<string, Handler> {
  return Object.fromEntries(
    Object.entries<ContractHandler>(handlers).map(([operationId, handle]) => [
      operationId,
      async (c: Context, ctx: AppContext) => {
        const { params, query, requestBody } = c.request;
        answer(
          ctx,
          await handle({ path: params, query, body: c.operation.requestBody ? requestBody : undefined }, ctx),
        );
      },
    ]),
  );
}

export interface ContractOptions {
  document: Document;
  handlers: OperationHandlers;
  securityHandlers?: SecurityHandlers;
  /** Runs after authentication, before validation (scope checks). */
  afterAuthentication?: (c: Context, ctx: AppContext) => Promise<void> | void;
  unauthorized?: (c: Context, ctx: AppContext) => never;
}

export async function createContract(options: ContractOptions): Promise<OpenAPIBackend> {
  const api = new OpenAPIBackend({
    definition: options.document,
    quick: true, // the 3.0 meta-schema check rejects 3.1 documents; `redocly lint` validates the document in CI
    coerceTypes: true,
    customizeAjv: (_ajv, ajvOptions) => {
      const ajv = new Ajv2020({ ...ajvOptions, strict: false, allErrors: false });
      addFormats.default(ajv);
      return ajv;
    },
    securityHandlers: options.securityHandlers ?? {},
    handlers: {
      ...contractHandlers(options.handlers),
      notFound: (_c: Context, ctx: AppContext) => {
        throw new UnknownEndpoint(ctx.method, ctx.path);
      },
      methodNotAllowed: (_c: Context, ctx: AppContext) => {
        throw new MethodNotAllowed(ctx.method, ctx.path, allowedMethods(api, ctx.path));
      },
      notImplemented: (_c: Context, ctx: AppContext) => {
        throw new UnknownEndpoint(ctx.method, ctx.path);
      },
      unauthorizedHandler:
        options.unauthorized ??
        (() => {
          throw new Unauthorized('unauthorized', 'Authentication is required.');
        }),
      postSecurityHandler: async (c: Context, ctx: AppContext) => {
        // A protected operation without valid credentials gets its 401 (unauthorizedHandler, next) before any body check.
        if (c.security?.authorized === false && (c.operation.security ?? []).length > 0) return;
        if (c.security?.authorized !== false) await options.afterAuthentication?.(c, ctx);
        // Body problems are reported only now, so routing (404/405) and authentication (401/403) come first, and only
        // by operations that take a body (any body sent to the others is ignored).
        if (ctx.state.bodyError && c.operation.requestBody) throw ctx.state.bodyError;
        requireDeclaredMediaType(c, ctx);
      },
      validationFail: validationFailed,
    },
  });
  await api.init();
  memoizeOperations(api);
  return api;
}

const ROUTE_CACHE_MAX_ENTRIES = 2_000;

/**
 * openapi-backend re-flattens every path of the document into its operation list on each call of
 * `getOperations()`/`getOperation()`, and rebuilds a regex per path template on each `matchOperation()`, several times
 * per request. The document never changes after init, so the list, the lookup by operationId and each route's match
 * (bounded, as paths carry ids) are computed once.
 */
function memoizeOperations(api: OpenAPIBackend): void {
  const operations = api.router.getOperations();
  const byId = new Map(operations.map((operation) => [operation.operationId, operation]));
  api.router.getOperations = () => operations;
  api.router.getOperation = (operationId: string) => byId.get(operationId);

  const matchOperation = api.router.matchOperation.bind(api.router);
  const matches = new LRUCache<string, Operation>({ max: ROUTE_CACHE_MAX_ENTRIES });
  api.router.matchOperation = ((request: Request, strict?: boolean) => {
    const key = `${request.method.toLowerCase()} ${request.path}`;
    const cached = matches.get(key);
    if (cached) return cached;
    const match = matchOperation(request, strict as true);
    if (match) matches.set(key, match); // misses throw (404/405) or are undefined: never cached
    return match;
  }) as typeof api.router.matchOperation;
}

export function allowedMethods(api: OpenAPIBackend, path: string): string[] {
  const allowed = METHODS.filter((method) => {
    try {
      return Boolean(api.router.matchOperation({ method, path, headers: {} }, true));
    } catch {
      return false;
    }
  }).map((method) => method.toUpperCase());
  return allowed.includes('GET') ? [...allowed, 'HEAD'] : allowed;
}

export function dispatchContract(api: OpenAPIBackend): AppMiddleware {
  return async (ctx) => {
    if (!isDecodable(ctx.path)) throw new UnknownEndpoint(ctx.method, ctx.path);
    // HEAD is GET without the body (RFC 9110): routed as GET; Koa sends no body for HEAD.
    const method = ctx.method === 'HEAD' ? 'GET' : ctx.method;
    await api.handleRequest(
      {
        method,
        path: ctx.path,
        query: ctx.query as Record<string, string | string[]>,
        headers: ctx.headers as Record<string, string | string[]>,
        body: ctx.request.body,
      },
      ctx,
    );
  };
}
