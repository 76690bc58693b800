// The UCP MCP binding at /ucp/mcp (A.10 of the design): JSON-RPC over Streamable HTTP (stateless, JSON responses,
// MCP 2026-07-28, 2025-11-25 and 2025-06-18), the five checkout tools of UCP's mcp.openrpc.json (and its catalog and
// cart tools, src/mcp/ucp-shopping-tools.ts), served by the MCP
// servers' JSON-RPC core (src/mcp/rpc.ts) with UCP's variant: protocol errors are JSON-RPC errors carrying the REST
// status and UCP's error body, which SDK tools cannot answer. Each call runs exactly what the REST binding runs (the
// same executor), so structuredContent is the REST body: the answer's bytes as sent and stored, never read back but
// for a stored error.
import type { WebDeps as Deps } from '../http/web-deps.js';
import type { AppContext } from '../http/context.js';
import { isUuid, protocolErrorOf } from '../http/protocol-io.js';
import type { RateLimited } from '../domain/errors.js';
import type { UcpAnswer, UcpErrorBody, UcpExecution } from '../handlers/ucp/checkout.js';
import type { Tool as ToolListing } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../log.js';
import type { ProtocolResponse } from '../protocols/answers.js';
import { protocolArgumentProblem } from './schemas.js';
import type { ValidatorRegistry } from '../validators.js';
import { protocolKeys } from '../services/idempotency/index.js';
import {
  createRpcServer,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  RpcError,
  type RpcServer,
  type RpcTool,
  type RpcVariant,
} from './rpc.js';
import { admit, admittedByRateLimit, mirroredHeaders, readMessage, sendAnswer } from './transport.js';
import { ucpCheckoutResponseSchema, ucpRequestSchema, ucpResponseSchema } from './ucp-schemas.js';
import { UCP_SHOPPING_TOOLS } from './ucp-shopping-tools.js';
import { CANCELS, idArgument, READS, defineUcpTool, WRITES, type UcpToolDefinition } from './ucp-tool-definitions.js';

export const UCP_MCP_PATH = '/ucp/mcp';

// JSON-RPC error codes of the binding (A.10) besides JSON-RPC's own: negotiation, protocol conflicts.
const NEGOTIATION_ERROR = -32001;
const PROTOCOL_ERROR = -32000;
const NEGOTIATION_CODES = new Set([
  'invalid_profile_url',
  'profile_unreachable',
  'profile_malformed',
  'version_unsupported',
]);

const id = idArgument('checkout');

type ToolDefinition = UcpToolDefinition;

const TOOLS: Record<string, ToolDefinition> = {
  create_checkout: defineUcpTool({
    op: 'create',
    title: 'Create a checkout',
    hints: { ...WRITES, idempotentHint: false },
    description:
      'Create a UCP checkout from line_items ({item: {id: variant_…}, quantity}), with optional buyer, context.address_country, discounts.codes and fulfillment (methods[0]: type shipping, destinations [postal address], groups[0].selected_option_id standard or express; when dev.ucp.shopping.fulfillment is negotiated). Payment is a human hand-off at continue_url.',
    body: {
      name: 'checkout',
      schema: ucpRequestSchema('create', 'The create request (shopping/checkout.json, create fields).'),
    },
  }),
  get_checkout: defineUcpTool({
    op: 'get',
    title: 'Get a checkout',
    hints: READS,
    description: 'Get a checkout, priced now.',
    id,
  }),
  update_checkout: defineUcpTool({
    op: 'update',
    // The same replacement twice leaves the checkout as once.
    title: 'Replace a checkout',
    hints: { ...WRITES, idempotentHint: true },
    description:
      'Replace a checkout: line_items (known line ids are kept), buyer, discounts.codes and fulfillment (a new destination, or selected_destination_id to keep the current one, and groups[0].selected_option_id); absent buyer, codes or fulfillment are cleared. An address the store does not ship to leaves the checkout unchanged, answered incomplete with an error at the field.',
    id,
    body: {
      name: 'checkout',
      schema: ucpRequestSchema('update', 'The update request; without an id (the id is the tool argument).'),
    },
  }),
  complete_checkout: defineUcpTool({
    op: 'complete',
    // meta["idempotency-key"] is required: a retry with the same key replays.
    title: 'Complete a checkout',
    hints: { ...WRITES, idempotentHint: true },
    description:
      'Ask to complete a checkout. This store never takes payment through the API: the answer is the checkout, requires_escalation, with its continue_url.',
    keyed: true,
    id,
    body: { name: 'checkout', schema: ucpRequestSchema('complete', 'The complete request, with payment.') },
  }),
  cancel_checkout: defineUcpTool({
    op: 'cancel',
    title: 'Cancel a checkout',
    hints: CANCELS,
    description: 'Cancel a checkout (final).',
    keyed: true,
    id,
  }),
  get_order: defineUcpTool({
    op: 'get_order',
    title: 'Get an order',
    hints: READS,
    description:
      "Get an order created by one of this platform's checkouts (dev.ucp.shopping.order): its line items, fulfillment and adjustments; any other id is not_found.",
    id: idArgument('order'),
    outputSchema: ucpResponseSchema(
      ['shopping/order.json', 'shopping/types/error_response.json'],
      "A UCP order, or UCP's error_response; the same body GET /ucp/orders/{id} answers.",
    ),
  }),
};

/**
 * What the arguments are checked against before the operation runs: the listed schema, but `checkout` only as an
 * object; the operation checks the request itself, as on REST, so its problems name the same paths there and here.
 */
function argumentSchema(tool: ToolDefinition): object {
  const { properties } = tool.inputSchema;
  const body = tool.body ?? 'checkout';
  return properties[body]
    ? { ...tool.inputSchema, properties: { ...properties, [body]: { type: 'object' } } }
    : tool.inputSchema;
}

/** What a UCP tool needs of its request besides the arguments. */
export interface UcpCaller {
  /** The client's address, charged for a profile fetch its call causes. */
  ip: string;
  /** The Idempotency-Key header ('' when absent): it must agree with meta["idempotency-key"]. */
  idempotencyKeyHeader: string;
  log: () => Logger;
}

/** A UCP protocol error (thrown, or answered and stored) as the JSON-RPC error of A.10, with the REST status. */
export function rpcErrorOf(status: number, body: UcpErrorBody, retryAfter?: string): RpcError {
  const code = NEGOTIATION_CODES.has(body.code)
    ? NEGOTIATION_ERROR
    : status === 400
      ? INVALID_PARAMS
      : status >= 500 && status !== 503
        ? INTERNAL_ERROR
        : PROTOCOL_ERROR;
  return new RpcError(code, body.content, {
    status,
    data: { ...body, ...(retryAfter ? { retry_after: Number(retryAfter) } : {}) },
    // What the REST binding would send as a header.
    ...(retryAfter ? { headers: { 'Retry-After': retryAfter } } : {}),
  });
}

function invalidParams(content: string, path: string): RpcError {
  return new RpcError(INVALID_PARAMS, content, { status: 400, data: { code: 'invalid_request', content, path } });
}

/**
 * UCP's variant of the JSON-RPC core: an invalid message is -32600 Invalid Request; a client's response or non-object
 * params are not refused by the envelope (the methods read what they need), nor an initialize without protocolVersion;
 * every refusal of a call is an error with the REST status and UCP's error body, and a failure of the operation is
 * mapped from the REST status (rpcErrorOf).
 */
export const UCP_VARIANT: RpcVariant<UcpCaller> = {
  acceptsClientResponses: false,
  requiresObjectParams: false,
  invalidMessage: new RpcError(
    INVALID_REQUEST,
    'Invalid request: send jsonrpc "2.0", a string method and, for a request, a string or integer id.',
    { status: 400 },
  ),
  methodNotFound: (method) => new RpcError(METHOD_NOT_FOUND, `Method ${method} is not served here.`),
  refuseToolCall({ name, tool, toolNames }) {
    if (tool) return undefined; // the tool checks its arguments itself, against its own schema
    return invalidParams(`Unknown tool ${String(name)}; the tools are ${toolNames.join(', ')}.`, '$.name');
  },
  failure(error, caller) {
    // An unexpected failure too is a JSON-RPC error (-32603), never the REST error shape.
    const failure = protocolErrorOf(error, caller.log, { rateLimited: 'rate_limited' });
    return rpcErrorOf(
      failure.status,
      {
        code: failure.code,
        content: failure.message,
        ...(failure.options.param ? { path: failure.options.param } : {}),
      },
      failure.options.headers?.['Retry-After'],
    );
  },
};

interface ToolArguments {
  meta: { 'ucp-agent': { profile: string }; 'idempotency-key'?: string };
  id?: string;
  checkout?: Record<string, unknown>;
  cart?: Record<string, unknown>;
  catalog?: Record<string, unknown>;
}

/** The arguments' own checks: the schema, a UUID key, no checkout id on update, and no header key that disagrees. */
function checkedArguments(
  validators: ValidatorRegistry,
  caller: UcpCaller,
  name: string,
  tool: ToolDefinition,
  args: unknown,
): ToolArguments {
  const problem = protocolArgumentProblem(validators, `ucp-mcp:${name}`, argumentSchema(tool), args);
  if (problem) throw invalidParams(problem.message, problem.path);
  const checked = args as ToolArguments;
  const key = checked.meta['idempotency-key'];
  if (tool.op === 'update' && checked.checkout && 'id' in checked.checkout)
    throw invalidParams('checkout.id must not be sent: the checkout is named by the id argument.', '$.checkout.id');
  const header = caller.idempotencyKeyHeader;
  if (header && header !== key)
    throw invalidParams(
      'The Idempotency-Key header and meta["idempotency-key"] disagree; send one key.',
      "$.meta['idempotency-key']",
    );
  if (key !== undefined && !isUuid(key))
    throw invalidParams('meta["idempotency-key"] must be a UUID.', "$.meta['idempotency-key']");
  return checked;
}

/**
 * The tool result of a UCP body (a checkout, or UCP's 200 error_response) from its JSON as the REST binding sends and
 * stores it, without parsing it: structuredContent is that JSON itself, and the text block the same JSON as a string.
 */
function toolResultJson(body: string): string {
  return `{"structuredContent":${body},"content":[{"type":"text","text":${JSON.stringify(body)}}],"isError":false}`;
}

/** UCP's protocol error that an answer at or above 300 renders, as a value. */
function errorBodyOf(answer: UcpAnswer): UcpErrorBody {
  // A replay: the bytes stored under the key are all there is of it.
  return answer.failure ?? (JSON.parse(answer.response.body) as UcpErrorBody);
}

/** The REST binding's order reader (GET /ucp/orders/{id}): negotiation, then the order or UCP's error_response. */
export type UcpOrderReader = (read: { profileUrl: string; address: string; id: string }) => Promise<ProtocolResponse>;

/** What the tools run: the REST binding's executor and its order reader. */
export interface UcpOperations {
  execute: (execution: UcpExecution) => Promise<UcpAnswer>;
  readOrder: UcpOrderReader;
}

function ucpTool(
  name: string,
  tool: ToolDefinition,
  outputSchema: ToolListing['outputSchema'],
  { execute, readOrder }: UcpOperations,
  validators: ValidatorRegistry,
): RpcTool<UcpCaller> {
  const { description, annotations, inputSchema } = tool;
  return {
    name,
    listing: { name, title: annotations.title, description, annotations, inputSchema, outputSchema },
    async call(given, caller) {
      const args = checkedArguments(validators, caller, name, tool, given);
      const profileUrl = args.meta['ucp-agent'].profile;
      if (tool.op === 'get_order') {
        // The schema requires the id. The reader answers its refusals as UCP's 200 error_response, as on REST.
        const response = await readOrder({ profileUrl, address: caller.ip, id: args.id! });
        if (response.status >= 300)
          throw rpcErrorOf(response.status, JSON.parse(response.body) as UcpErrorBody, response.headers['Retry-After']);
        return toolResultJson(response.body);
      }
      const key = args.meta['idempotency-key'];
      // The hash covers the arguments without meta, so a retry with a new JSON-RPC id (or new meta) replays (ucp#664).
      const { meta: _meta, ...hashed } = args;
      const idempotency =
        key === undefined ? undefined : { key, scope: protocolKeys.scope.ucpMcp(profileUrl, name, args.id), hashed };
      // A thrown failure is mapped by UCP_VARIANT.failure.
      const answer = await execute({
        profileUrl,
        address: caller.ip,
        op: tool.op,
        id: args.id,
        body: args[tool.body ?? 'checkout'],
        idempotency,
      });
      const { response } = answer;
      if (response.status >= 300)
        throw rpcErrorOf(response.status, errorBodyOf(answer), response.headers['Retry-After']);
      return toolResultJson(response.body);
    },
  };
}

/** The /ucp/mcp server over the REST binding's executor and order reader; built once per process. */
export function createUcpMcpServer(operations: UcpOperations, validators: ValidatorRegistry): RpcServer<UcpCaller> {
  const checkoutOutput = ucpCheckoutResponseSchema() as ToolListing['outputSchema'];
  const tools: Record<string, ToolDefinition> = { ...TOOLS, ...UCP_SHOPPING_TOOLS };
  return createRpcServer(
    {
      name: 'storefront-ucp',
      version: '2026-04-08',
      tools: Object.entries(tools).map(([name, tool]) =>
        ucpTool(
          name,
          tool,
          (tool.outputSchema as ToolListing['outputSchema'] | undefined) ?? checkoutOutput,
          operations,
          validators,
        ),
      ),
    },
    UCP_VARIANT,
  );
}

/** UCP's refusal of a request over the rate limit: the JSON-RPC error of A.10. */
function rateLimitRefusal(error: RateLimited): RpcError {
  return rpcErrorOf(429, { code: 'rate_limited', content: error.message }, String(error.retryAfterSeconds));
}

/** Serves one JSON-RPC message on /ucp/mcp. */
export async function serveUcpMcp(ctx: AppContext, deps: Deps, server: RpcServer<UcpCaller>): Promise<void> {
  if (!(await admittedByRateLimit(ctx, deps, rateLimitRefusal))) return;
  if (!admit(ctx, deps)) return;
  const message = await readMessage(ctx);
  if (!message) return;
  const caller: UcpCaller = { ip: ctx.ip, idempotencyKeyHeader: ctx.get('Idempotency-Key'), log: () => ctx.state.log };
  sendAnswer(ctx, await server.answer(message, caller, mirroredHeaders(ctx.req.headers)));
}
