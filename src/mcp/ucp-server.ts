// The UCP MCP binding at /ucp/mcp (A.10 of the design): JSON-RPC over Streamable HTTP (stateless, JSON responses,
// protocol 2025-06-18), the five checkout tools of UCP's mcp.openrpc.json. Served without the SDK's McpServer because
// UCP requires protocol errors as JSON-RPC errors carrying the REST status, which SDK tools cannot answer. Each call
// runs exactly what the REST binding runs (the same executor), so structuredContent is the REST body.
import type { WebDeps as Deps } from '../http/web-deps.js';
import type { AppContext } from '../http/context.js';
import { isUuid, protocolErrorOf, rateLimit } from '../http/protocol-io.js';
import { RateLimited } from '../domain/errors.js';
import type { UcpAnswer, UcpExecution, UcpOperation } from '../handlers/ucp/checkout.js';
import { firstSchemaError, schemaByRef } from '../protocols/schemas.js';
import { jsonPath } from '../domain/protocol-session.js';
import { unstorableTextAt } from '../domain/text.js';
import { INVALID_REQUEST, NEGOTIATED_PROTOCOL_VERSION } from './rpc.js';
import { ACCEPTED_PROTOCOL_VERSIONS, admit, readMessage } from './transport.js';

export const UCP_MCP_PATH = '/ucp/mcp';

// JSON-RPC error codes of the binding (A.10): negotiation, protocol conflicts, invalid params, unexpected.
const NEGOTIATION_ERROR = -32001;
const PROTOCOL_ERROR = -32000;
const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
const INTERNAL_ERROR = -32603;
const NEGOTIATION_CODES = new Set([
  'invalid_profile_url',
  'profile_unreachable',
  'profile_malformed',
  'version_unsupported',
]);

const meta = (required: string[]) => ({
  type: 'object',
  description:
    'Request metadata: `ucp-agent.profile` (the platform profile URL, as the UCP-Agent header) and `idempotency-key` (a UUID, as the Idempotency-Key header).',
  required,
  properties: {
    'ucp-agent': { type: 'object', required: ['profile'], properties: { profile: { type: 'string', format: 'uri' } } },
    'idempotency-key': { type: 'string', format: 'uuid' },
  },
});
const id = { type: 'string', minLength: 1, maxLength: 200, description: 'The checkout id.' };
const checkout = (description: string) => ({ type: 'object', description });

interface ToolDefinition {
  op: UcpOperation;
  description: string;
  inputSchema: { type: 'object'; required: string[]; properties: Record<string, unknown> };
}

const TOOLS: Record<string, ToolDefinition> = {
  create_checkout: {
    op: 'create',
    description:
      'Create a UCP checkout from line_items ({item: {id: variant_…}, quantity}), with optional buyer, context.address_country and discounts.codes. Payment is a human hand-off at continue_url.',
    inputSchema: {
      type: 'object',
      required: ['meta', 'checkout'],
      properties: {
        meta: meta(['ucp-agent']),
        checkout: checkout('The create request (shopping/checkout.json, create fields).'),
      },
    },
  },
  get_checkout: {
    op: 'get',
    description: 'Get a checkout, priced now.',
    inputSchema: { type: 'object', required: ['meta', 'id'], properties: { meta: meta(['ucp-agent']), id } },
  },
  update_checkout: {
    op: 'update',
    description:
      'Replace a checkout: line_items (known line ids are kept), buyer and discounts.codes; absent buyer or codes are cleared.',
    inputSchema: {
      type: 'object',
      required: ['meta', 'id', 'checkout'],
      properties: {
        meta: meta(['ucp-agent']),
        id,
        checkout: checkout('The update request; without an id (the id is the tool argument).'),
      },
    },
  },
  complete_checkout: {
    op: 'complete',
    description:
      'Ask to complete a checkout. This store never takes payment through the API: the answer is the checkout, requires_escalation, with its continue_url.',
    inputSchema: {
      type: 'object',
      required: ['meta', 'id', 'checkout'],
      properties: {
        meta: meta(['ucp-agent', 'idempotency-key']),
        id,
        checkout: checkout('The complete request, with payment.'),
      },
    },
  },
  cancel_checkout: {
    op: 'cancel',
    description: 'Cancel a checkout (final).',
    inputSchema: {
      type: 'object',
      required: ['meta', 'id'],
      properties: { meta: meta(['ucp-agent', 'idempotency-key']), id },
    },
  },
};

const OUTPUT_SCHEMA = {
  type: 'object',
  description:
    "A UCP checkout, or UCP's error_response (rest.openapi.json checkout_response); the same body the REST binding answers.",
};

type JsonRpcId = string | number | null;

class RpcError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
  }
}

function send(ctx: AppContext, status: number, payload: object): void {
  ctx.status = status;
  ctx.type = 'application/json';
  ctx.body = JSON.stringify({ jsonrpc: '2.0', ...payload });
}

/** A UCP protocol error (thrown, or answered and stored) as the JSON-RPC error of A.10, with the REST status. */
function rpcErrorOf(
  status: number,
  body: { code: string; content: string; path?: string; continue_url?: string },
  retryAfter?: string,
): RpcError {
  const code = NEGOTIATION_CODES.has(body.code)
    ? NEGOTIATION_ERROR
    : status === 400
      ? INVALID_PARAMS
      : status >= 500 && status !== 503
        ? INTERNAL_ERROR
        : PROTOCOL_ERROR;
  return new RpcError(status, code, body.content, {
    ...body,
    ...(retryAfter ? { retry_after: Number(retryAfter) } : {}),
  });
}

function invalidParams(content: string, path: string): RpcError {
  return new RpcError(400, INVALID_PARAMS, content, { code: 'invalid_request', content, path });
}

interface ToolArguments {
  meta: { 'ucp-agent': { profile: string }; 'idempotency-key'?: string };
  id?: string;
  checkout?: Record<string, unknown>;
}

/** The arguments' own checks: the schema, a UUID key, no checkout id on update, and no header key that disagrees. */
function checkedArguments(ctx: AppContext, name: string, tool: ToolDefinition, args: unknown): ToolArguments {
  const unstorable = unstorableTextAt(args);
  if (unstorable) {
    const path = jsonPath(unstorable);
    throw invalidParams(
      `Invalid arguments: ${path} must not contain a NUL character (U+0000) or an unpaired surrogate.`,
      path,
    );
  }
  const error = firstSchemaError(schemaByRef(`ucp-mcp:${name}`, tool.inputSchema), args ?? {});
  if (error) {
    const segments = error.instancePath.split('/').slice(1);
    const missing =
      error.keyword === 'required' ? [String((error.params as { missingProperty: string }).missingProperty)] : [];
    const path = jsonPath([...segments, ...missing]);
    throw invalidParams(`Invalid arguments: ${path} ${error.message ?? 'is invalid'}.`, path);
  }
  const checked = args as ToolArguments;
  const key = checked.meta['idempotency-key'];
  if (tool.op === 'update' && checked.checkout && 'id' in checked.checkout)
    throw invalidParams('checkout.id must not be sent: the checkout is named by the id argument.', '$.checkout.id');
  const header = ctx.get('Idempotency-Key');
  if (header && header !== key)
    throw invalidParams(
      'The Idempotency-Key header and meta["idempotency-key"] disagree; send one key.',
      "$.meta['idempotency-key']",
    );
  if (key !== undefined && !isUuid(key))
    throw invalidParams('meta["idempotency-key"] must be a UUID.', "$.meta['idempotency-key']");
  return checked;
}

async function callTool(
  ctx: AppContext,
  execute: (execution: UcpExecution) => Promise<UcpAnswer>,
  params: { name?: unknown; arguments?: unknown },
): Promise<object> {
  const name = String(params?.name);
  const tool = TOOLS[name];
  if (!tool) throw invalidParams(`Unknown tool ${name}; the tools are ${Object.keys(TOOLS).join(', ')}.`, '$.name');
  const args = checkedArguments(ctx, name, tool, params.arguments);
  const profileUrl = args.meta['ucp-agent'].profile;
  const key = args.meta['idempotency-key'];
  // The hash covers the arguments without meta, so a retry with a new JSON-RPC id (or new meta) replays (ucp#664).
  const { meta: _meta, ...hashed } = args;
  const idempotency =
    key === undefined ? undefined : { key, scope: `ucp-mcp|${profileUrl}|${name} ${args.id ?? ''}`, hashed };
  let answer: UcpAnswer;
  try {
    answer = await execute({
      profileUrl,
      address: ctx.ip,
      op: tool.op,
      id: args.id,
      body: args.checkout,
      idempotency,
    });
  } catch (error) {
    // An unexpected failure too is a JSON-RPC error (-32603), never the REST error shape.
    const failure = protocolErrorOf(error, () => ctx.state.log, { rateLimited: 'rate_limited' });
    throw rpcErrorOf(
      failure.status,
      {
        code: failure.code,
        content: failure.message,
        ...(failure.options.param ? { path: failure.options.param } : {}),
      },
      failure.options.headers?.['Retry-After'],
    );
  }
  const { response } = answer;
  if (response.status >= 300)
    throw rpcErrorOf(response.status, JSON.parse(response.body), response.headers['Retry-After']);
  return {
    structuredContent: JSON.parse(response.body),
    content: [{ type: 'text', text: response.body }],
    isError: false,
  };
}

function initializeResult(params: { protocolVersion?: unknown } | undefined): object {
  const requested = params?.protocolVersion;
  return {
    protocolVersion:
      typeof requested === 'string' && ACCEPTED_PROTOCOL_VERSIONS.includes(requested)
        ? requested
        : NEGOTIATED_PROTOCOL_VERSION,
    capabilities: { tools: {} },
    serverInfo: { name: 'storefront-ucp', version: '2026-04-08' },
  };
}

/** Answers with `error` (and its Retry-After, which the REST binding would send as a header). */
function sendError(ctx: AppContext, id: JsonRpcId, error: RpcError): void {
  if (error.data?.retry_after !== undefined) ctx.set('Retry-After', String(error.data.retry_after));
  send(ctx, error.status, {
    id,
    error: { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) },
  });
}

/** Counts the request against its address; over the limit, the JSON-RPC error of A.10 (no id: nothing was read). */
async function admittedByRateLimit(ctx: AppContext, deps: Deps): Promise<boolean> {
  try {
    await rateLimit(ctx, deps);
    return true;
  } catch (error) {
    if (!(error instanceof RateLimited)) throw error;
    const retryAfter = String(error.retryAfterSeconds);
    sendError(ctx, null, rpcErrorOf(429, { code: 'rate_limited', content: error.message }, retryAfter));
    return false;
  }
}

/** Serves one JSON-RPC message on /ucp/mcp. */
export async function serveUcpMcp(
  ctx: AppContext,
  deps: Deps,
  execute: (execution: UcpExecution) => Promise<UcpAnswer>,
): Promise<void> {
  if (!(await admittedByRateLimit(ctx, deps))) return;
  if (!admit(ctx, deps)) return;
  const message = (await readMessage(ctx)) as
    { jsonrpc?: unknown; id?: unknown; method?: unknown; params?: Record<string, unknown> } | undefined;
  if (!message) return;
  if (
    message.jsonrpc !== '2.0' ||
    typeof message.method !== 'string' ||
    !(message.id === undefined || typeof message.id === 'string' || Number.isInteger(message.id))
  ) {
    return send(ctx, 400, {
      id: null,
      error: {
        code: INVALID_REQUEST,
        message: 'Invalid request: send jsonrpc "2.0", a string method and, for a request, a string or integer id.',
      },
    });
  }
  if (message.id === undefined) {
    ctx.body = null; // a notification: nothing to answer
    ctx.status = 202;
    return;
  }
  const id = message.id as JsonRpcId;
  try {
    switch (message.method) {
      case 'initialize':
        return send(ctx, 200, { id, result: initializeResult(message.params) });
      case 'ping':
        return send(ctx, 200, { id, result: {} });
      case 'tools/list':
        return send(ctx, 200, {
          id,
          result: {
            tools: Object.entries(TOOLS).map(([name, tool]) => ({
              name,
              description: tool.description,
              inputSchema: tool.inputSchema,
              outputSchema: OUTPUT_SCHEMA,
            })),
          },
        });
      case 'tools/call':
        return send(ctx, 200, { id, result: await callTool(ctx, execute, message.params ?? {}) });
      default:
        throw new RpcError(200, METHOD_NOT_FOUND, `Method ${String(message.method)} is not served here.`);
    }
  } catch (error) {
    if (!(error instanceof RpcError)) throw error;
    sendError(ctx, id, error);
  }
}
