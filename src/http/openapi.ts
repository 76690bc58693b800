// The contract at runtime: the bundled OpenAPI 3.1 document's operations, each with its handler, which the one router
// (src/http/routes.ts) serves. An operation's last step checks, in this order: its security requirements (401/403),
// the body's problems and media type, and openapi-backend's validation of parameters and body by that operation (Ajv
// 2020-12 + ajv-formats, coercing parameters to their types); the handler gets the validated input. Invalid requests
// become the domain's errors (src/domain/errors.ts).
import { OpenAPIBackend, type Document, type Operation } from 'openapi-backend';
import type { operations } from '../../codegen/types.js';
import type { McpOperationId } from '../mcp/index.js';
import type { ProtocolOperationId } from './protocols.js';
import type { AppContext, AppMiddleware } from './context.js';
import { BadRequest, Unauthorized, type BadRequestReason } from '../domain/errors.js';
import { firstProblem, type ValidationProblem } from './validation-errors.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { ValidatorRegistry } from '../validators.js';

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

const VALIDATION_REASONS: Record<ValidationProblem['kind'], BadRequestReason> = {
  missing: 'missing_field',
  unknown: 'unknown_field',
  invalid: 'invalid_field',
  malformed_json: 'invalid_body',
};

/** Header parameters are validated under lower-cased names; errors name them as the contract spells them. */
function canonicalParam(operation: Operation, param: string): string {
  const parameters = (operation.parameters ?? []) as Array<{ name: string; in: string }>;
  return (
    parameters.find((parameter) => parameter.in === 'header' && parameter.name.toLowerCase() === param)?.name ?? param
  );
}

/** The 400 for what the contract's validators found wrong with a request. */
function validationFailed(operation: Operation, errors: ErrorObject[]): never {
  const problem = firstProblem(errors);
  const param = canonicalParam(operation, problem.param);
  throw new BadRequest(VALIDATION_REASONS[problem.kind], problem.message.replace(problem.param, param), { param });
}

/** Media type of the request body (no parameters), lowercase. */
function mediaType(ctx: AppContext): string {
  return (ctx.get('Content-Type').split(';')[0] ?? '').trim().toLowerCase();
}

/** openapi-backend does not enforce Content-Type; a body sent as anything but a declared media type is a 400. */
function requireDeclaredMediaType(operation: Operation, ctx: AppContext): void {
  const requestBody = operation.requestBody as { content?: Record<string, unknown>; required?: boolean } | undefined;
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

export interface ContractOptions {
  document: Document;
  /** The process's validators (src/validators.ts): the operations' requests are validated with its Ajv variants. */
  validators: ValidatorRegistry;
  handlers: OperationHandlers;
  /** Whether a request satisfies a security scheme, by the scheme's name; a scheme without one is never satisfied. */
  securitySchemes?: Record<string, (ctx: AppContext) => boolean>;
  /** Runs once a request satisfies its operation's security requirements (scope checks). */
  afterAuthentication?: (operation: Operation, ctx: AppContext) => void;
  /** Throws the answer to a request that satisfies none of its operation's security requirements. */
  unauthorized?: (ctx: AppContext) => never;
}

/** An operation the contract serves: what the contract says of it, and its handler. */
export interface ContractRoute {
  operation: Operation;
  handle: ContractHandler;
}

export interface Contract {
  api: OpenAPIBackend;
  /** Every operation with a handler (those served by MCP or the protocol bindings have none here). */
  routes: ContractRoute[];
  options: ContractOptions;
}

export async function createContract(options: ContractOptions): Promise<Contract> {
  const api = new OpenAPIBackend({
    definition: options.document,
    quick: true, // the 3.0 meta-schema check rejects 3.1 documents; `redocly lint` validates the document in CI
    coerceTypes: true,
    // openapi-backend builds an Ajv per operation and validation context; the registry's variants serve them all (the
    // parameters' validators coerce, as openapi-backend asks).
    customizeAjv: (_ajv, ajvOptions) => options.validators.ajv(ajvOptions.coerceTypes ? 'coercing' : 'firstError'),
  });
  await api.init();
  const handlers: Partial<Record<string, ContractHandler>> = options.handlers;
  const routes: ContractRoute[] = [];
  for (const operation of api.getOperations()) {
    const handle = handlers[operation.operationId ?? ''];
    // Documented, but served by MCP or a protocol binding, or switched off: not a route of the contract's own.
    if (handle) routes.push({ operation, handle });
  }
  return { api, routes, options };
}

/**
 * The contract's validation of an operation's requests, as openapi-backend does it (its validators, compiled once per
 * operation: the body's, then the parameters', which coerce path and query values to their types), given the request
 * as Koa and the router already parsed it: no per-request parse of the path, query, headers and cookies, which was
 * most of a request's validation cost. A query parameter the contract declares as an array takes a single value too.
 */
function requestValidation(contract: Contract, operation: Operation) {
  const parameters = (operation.parameters ?? []) as Array<{ in: string; name: string; schema?: { type?: unknown } }>;
  const arrays = new Set(
    parameters.filter((parameter) => parameter.in === 'query' && parameter.schema?.type === 'array').map((p) => p.name),
  );
  const takesBody = Boolean(operation.requestBody);
  let validators: ValidateFunction[] | undefined;
  return (ctx: AppContext): { path: any; query: any; body: unknown } => {
    validators ??= contract.api.validator.getRequestValidatorsForOperation(operation.operationId!) ?? [];
    const query: Record<string, unknown> = {};
    const raw = ctx.query;
    for (const name in raw) {
      const value = raw[name];
      query[name] = typeof value === 'string' && arrays.has(name) ? [value] : value;
    }
    const request: Record<string, unknown> = {
      path: { ...ctx.state.params },
      query,
      header: ctx.req.headers,
      cookie: {},
    };
    const body: unknown = ctx.request.body;
    if (typeof body === 'object' || mediaType(ctx) === 'application/json') request.requestBody = body;
    const errors: ErrorObject[] = [];
    for (const validator of validators) if (!validator(request)) errors.push(...(validator.errors ?? []));
    if (errors.length) validationFailed(operation, errors);
    return { path: request.path, query, body: takesBody ? body : undefined };
  };
}

/** A request satisfies an operation with no requirements, or all the schemes of one of its requirements. */
function authenticated(
  operation: Operation,
  ctx: AppContext,
  schemes: ContractOptions['securitySchemes'] = {},
): boolean {
  const requirements = operation.security ?? [];
  return (
    requirements.length === 0 ||
    requirements.some((requirement) => Object.keys(requirement).every((scheme) => schemes[scheme]?.(ctx) === true))
  );
}

/**
 * The last step of an operation's route (src/http/routes.ts): its security requirements (401/403), the body's problems
 * and media type, the contract's validation of parameters and body, then its handler with the validated input.
 */
export function operationStep(contract: Contract, { operation, handle }: ContractRoute): AppMiddleware {
  const { options } = contract;
  const validate = requestValidation(contract, operation);
  return async (ctx) => {
    // A protected operation without valid credentials gets its 401 before any body check.
    if (!authenticated(operation, ctx, options.securitySchemes)) {
      if (options.unauthorized) options.unauthorized(ctx);
      throw new Unauthorized('unauthorized', 'Authentication is required.');
    }
    options.afterAuthentication?.(operation, ctx);
    // Body problems are reported only now, so routing (404/405) and authentication (401/403) come first, and only by
    // operations that take a body (any body sent to the others is never read).
    if (ctx.state.bodyError && operation.requestBody) throw ctx.state.bodyError;
    requireDeclaredMediaType(operation, ctx);
    const { path, query, body } = validate(ctx);
    answer(ctx, await handle({ path, query, body }, ctx));
  };
}
