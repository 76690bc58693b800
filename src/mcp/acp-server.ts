// ACP 2026-04-17 over MCP at /acp/mcp (openrpc.agentic_checkout.json): the five checkout tools, each mapped 1:1 to the
// ACP REST operation it names and run by the same executor (src/http/acp.ts), so a session created here is the same
// session over REST. Every tool takes `meta` (ACP's headers: `api_version`, and `idempotency_key`, which the four
// mutating tools require) and the REST body as `payload`. Authentication is the MCP server's, as the binding says: the
// HTTP request's bearer token (scope cart:write), checked before the JSON-RPC message is read. An ACP error is a tool
// result with `isError: true` whose text is ACP's flat Error as JSON, as the agent would read it over REST.
import type { AppContext } from '../http/context.js';
import type { WebDeps as Deps } from '../http/web-deps.js';
import type { ProtocolAnswer } from '../http/protocol-io.js';
import type { AcpOperation } from '../handlers/acp/checkout.js';
import type { RateLimited } from '../domain/errors.js';
import type { Logger } from '../log.js';
import type { ValidatorRegistry } from '../validators.js';
import { REQUEST_SCHEMAS, type RequestSchemaName } from '../protocols/requests.js';
import { acpSelfContained } from '../protocols/schemas.js';
import { protocolArgumentProblem, singleTyped } from './schemas.js';
import type { ProtocolResponse } from '../protocols/answers.js';
import {
  createRpcServer,
  errorAnswer,
  INVALID_PARAMS,
  MCP_VARIANT,
  RpcError,
  type RpcServer,
  type RpcTool,
} from './rpc.js';
import { admit, admittedByRateLimit, mirroredHeaders, readMessage, sendAnswer } from './transport.js';

export const ACP_MCP_PATH = '/acp/mcp';

/** JSON-RPC's code for server-defined errors: the transport's refusals (authentication, the rate limit). */
const SERVER_ERROR = -32000;

/** One ACP call as the REST binding runs it, after authentication. */
export interface AcpMcpCall {
  op: AcpOperation;
  id?: string;
  payload: unknown;
  apiVersion: string;
  idempotencyKey?: string;
}

export interface AcpMcpCaller {
  /** The OAuth client of the request's bearer token. */
  clientId: string;
  log: () => Logger;
}

/** What the ACP REST binding gives this server: its authentication, its executor and its error rendering. */
export interface AcpMcpBinding {
  /** The client of the request's bearer token; throws the binding's 401 or 403 ProtocolError. */
  authenticate(ctx: AppContext): Promise<string>;
  execute(clientId: string, call: AcpMcpCall): Promise<ProtocolAnswer>;
  /** Any failure, as ACP's flat Error with its status (a 500 logged). */
  failure(error: unknown, log: () => Logger): ProtocolResponse;
  /** The same, as a value: the data of the JSON-RPC error that refuses a request before its message is read. */
  refusal(
    error: unknown,
    log: () => Logger,
  ): { status: number; body: { message: string } & Record<string, unknown>; headers: Record<string, string> };
}

const meta = (idempotencyKey: boolean) => ({
  type: 'object',
  description:
    "ACP's request headers: `api_version` (API-Version, 2026-04-17), `idempotency_key` (Idempotency-Key, 1–255 characters), and optionally `request_id`, `user_agent`, `accept_language`.",
  required: idempotencyKey ? ['api_version', 'idempotency_key'] : ['api_version'],
  properties: {
    api_version: { type: 'string', examples: ['2026-04-17'] },
    idempotency_key: { type: 'string', minLength: 1, maxLength: 255 },
    request_id: { type: 'string' },
    user_agent: { type: 'string' },
    accept_language: { type: 'string' },
    signature: { type: 'string' },
    timestamp: { type: 'string' },
  },
});
const id = { type: 'string', minLength: 1, maxLength: 200, description: 'The checkout session id.' };

interface ToolDefinition {
  op: AcpOperation;
  title: string;
  description: string;
  /** The schema the payload is checked with, over REST as here (none: the tool takes no payload). */
  payload?: RequestSchemaName;
  payloadRequired: boolean;
  result: 'CheckoutSession' | 'CheckoutSessionWithOrder';
  readOnly: boolean;
  destructive: boolean;
}

const TOOLS: Record<string, ToolDefinition> = {
  create_checkout_session: {
    op: 'create',
    title: 'Create a checkout session',
    description:
      'Create an ACP checkout session from line_items ({id: variant_…, quantity}), currency and capabilities; maps to POST /checkout_sessions. Payment is a human hand-off at the session’s continue_url.',
    payload: 'acp.create',
    payloadRequired: true,
    result: 'CheckoutSession',
    readOnly: false,
    destructive: false,
  },
  get_checkout_session: {
    op: 'retrieve',
    title: 'Get a checkout session',
    description: 'The session as it stands, priced now; maps to GET /checkout_sessions/{id}.',
    payloadRequired: false,
    result: 'CheckoutSession',
    readOnly: true,
    destructive: false,
  },
  update_checkout_session: {
    op: 'update',
    title: 'Update a checkout session',
    description:
      'Change line items, buyer, fulfillment details or discounts; maps to POST /checkout_sessions/{id}. Answers the session re-priced.',
    payload: 'acp.update',
    payloadRequired: true,
    result: 'CheckoutSession',
    readOnly: false,
    destructive: false,
  },
  complete_checkout_session: {
    op: 'complete',
    title: 'Complete a checkout session',
    description:
      'Ask to complete the session; maps to POST /checkout_sessions/{id}/complete. This store never takes payment through the API: the buyer pays at continue_url.',
    payload: 'acp.complete',
    payloadRequired: true,
    result: 'CheckoutSessionWithOrder',
    readOnly: false,
    destructive: false,
  },
  cancel_checkout_session: {
    op: 'cancel',
    title: 'Cancel a checkout session',
    description: 'Cancel the session (final); maps to POST /checkout_sessions/{id}/cancel.',
    payload: 'acp.cancel',
    payloadRequired: false,
    result: 'CheckoutSession',
    readOnly: false,
    destructive: true,
  },
};

function inputSchema(tool: ToolDefinition) {
  const mutating = tool.op !== 'retrieve';
  const properties: Record<string, object> = { meta: meta(mutating) };
  if (tool.op !== 'create') properties.id = id;
  const payload = tool.payload ? acpSelfContained(REQUEST_SCHEMAS[tool.payload]) : undefined;
  if (payload) properties.payload = payload.schema;
  const required = ['meta', ...(tool.op === 'create' ? [] : ['id']), ...(tool.payloadRequired ? ['payload'] : [])];
  return { type: 'object' as const, required, properties, ...(payload ? { $defs: payload.$defs } : {}) };
}

/** What the tool checks itself: meta and id (the payload is checked by the operation, as the REST body is). */
function argumentsSchema(tool: ToolDefinition) {
  const { properties, required } = inputSchema(tool) as { properties: Record<string, object>; required: string[] };
  return { type: 'object', required, properties: { ...properties, payload: {} } };
}

/** A session's schema, terse: MCP wants an object schema at the root, and this one is an allOf of objects. */
function outputSchema(definition: ToolDefinition['result']) {
  const { schema, $defs } = acpSelfContained(definition, { terse: true });
  return { ...schema, $defs };
}

function invalidParams(message: string, path: string): RpcError {
  return new RpcError(INVALID_PARAMS, message, {
    data: { type: 'invalid_request', code: 'invalid_params', message, param: path },
  });
}

interface ToolArguments {
  meta: { api_version: string; idempotency_key?: string };
  id?: string;
  payload?: unknown;
}

function checkedArguments(
  validators: ValidatorRegistry,
  name: string,
  tool: ToolDefinition,
  args: unknown,
): ToolArguments {
  const problem = protocolArgumentProblem(validators, `acp-mcp:${name}`, argumentsSchema(tool), args);
  if (problem) throw invalidParams(problem.message, problem.path);
  return args as ToolArguments;
}

/**
 * A tool result of the REST body's JSON as sent, without parsing it: a session is the structuredContent (and the same
 * JSON as text); an ACP error, which the tool's outputSchema does not describe, is the text alone, with isError.
 */
function toolResultJson(body: string, isError: boolean): string {
  const text = `"content":[{"type":"text","text":${JSON.stringify(body)}}]`;
  return isError ? `{${text},"isError":true}` : `{"structuredContent":${body},${text},"isError":false}`;
}

function acpTool(
  name: string,
  tool: ToolDefinition,
  binding: AcpMcpBinding,
  validators: ValidatorRegistry,
): RpcTool<AcpMcpCaller> {
  const { readOnly, destructive } = tool;
  return {
    name,
    // Listed single-typed (singleTyped), as the catalog and checkout tools are; the arguments are checked against
    // ACP's own schemas.
    listing: singleTyped({
      name,
      title: tool.title,
      description: tool.description,
      inputSchema: inputSchema(tool),
      outputSchema: { type: 'object' as const, ...outputSchema(tool.result) },
      annotations: { readOnlyHint: readOnly, destructiveHint: destructive, idempotentHint: true, openWorldHint: false },
    }),
    async call(given, caller) {
      const args = checkedArguments(validators, name, tool, given);
      let response: ProtocolResponse;
      try {
        ({ response } = await binding.execute(caller.clientId, {
          op: tool.op,
          ...(args.id === undefined ? {} : { id: args.id }),
          payload: args.payload,
          apiVersion: args.meta.api_version,
          ...(args.meta.idempotency_key === undefined ? {} : { idempotencyKey: args.meta.idempotency_key }),
        }));
      } catch (error) {
        response = binding.failure(error, caller.log);
      }
      return toolResultJson(response.body, response.status >= 300);
    },
  };
}

/** The /acp/mcp server over the REST binding's executor; built once per process. */
export function createAcpMcpServer(binding: AcpMcpBinding, validators: ValidatorRegistry): RpcServer<AcpMcpCaller> {
  return createRpcServer(
    {
      name: 'storefront-acp',
      version: '2026-04-17',
      instructions:
        'ACP 2026-04-17 checkout over MCP. Every tool takes meta.api_version "2026-04-17"; create, update, complete and cancel also take meta.idempotency_key. The payload is the ACP REST body.',
      tools: Object.entries(TOOLS).map(([name, tool]) => acpTool(name, tool, binding, validators)),
    },
    MCP_VARIANT,
  );
}

/** A refusal before the message is read (no id can be trusted), with the binding's status and headers. */
function refusalError(refusal: ReturnType<AcpMcpBinding['refusal']>, extra: Record<string, unknown> = {}): RpcError {
  const { status, body, headers } = refusal;
  const data = { ...body, ...extra };
  return new RpcError(SERVER_ERROR, body.message, { status, data, headers });
}

/** Serves one JSON-RPC message on /acp/mcp: the rate limit, the transport's checks, the bearer token, the message. */
export async function serveAcpMcp(
  ctx: AppContext,
  deps: Deps,
  server: RpcServer<AcpMcpCaller>,
  binding: AcpMcpBinding,
): Promise<void> {
  const log = () => ctx.state.log;
  const rateLimited = (error: RateLimited) =>
    refusalError(binding.refusal(error, log), { retry_after: error.retryAfterSeconds });
  if (!(await admittedByRateLimit(ctx, deps, rateLimited))) return;
  if (!admit(ctx, deps)) return;
  let clientId: string;
  try {
    clientId = await binding.authenticate(ctx);
  } catch (error) {
    sendAnswer(ctx, errorAnswer(null, refusalError(binding.refusal(error, log))));
    return;
  }
  const message = await readMessage(ctx);
  if (!message) return;
  sendAnswer(ctx, await server.answer(message, { clientId, log }, mirroredHeaders(ctx.req.headers)));
}
