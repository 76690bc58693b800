// The shape of every /ucp/mcp tool (the checkout's five and get_order, src/mcp/ucp-server.ts; the catalog and cart
// tools, src/mcp/ucp-shopping-tools.ts): one declaration of the behaviour hints and of the arguments' layout (`meta`,
// then the resource id and/or the request body).
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { UcpOperation } from '../handlers/ucp/checkout.js';
import type { UcpShoppingOperation } from '../domain/ucp-shopping.js';
import { ucpToolMeta } from './ucp-schemas.js';

export type UcpToolBody = 'checkout' | 'cart' | 'catalog';

export interface UcpToolDefinition {
  /** The operation the tool runs: the REST executor's, or `get_order`, the order reader's (GET /ucp/orders/{id}). */
  op: UcpOperation | UcpShoppingOperation | 'get_order';
  /** The argument that carries the request body (`checkout` unless said otherwise). */
  body?: UcpToolBody;
  /** The result's schema (a checkout's unless said otherwise). */
  outputSchema?: object;
  description: string;
  /** The behaviour hints every MCP tool here carries (MCP ToolAnnotations). */
  annotations: ToolAnnotations;
  inputSchema: { type: 'object'; required: string[]; properties: Record<string, object> };
}

// The tools act on this store only (the platform profile is only read).
/** A read: the same call twice reads twice. */
export const READS = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
} as const;
/** A change: not read-only, not a deletion. */
export const WRITES = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
/** A cancellation: final, and the same cancellation twice is one. */
export const CANCELS = {
  readOnlyHint: false,
  destructiveHint: true,
  idempotentHint: true,
  openWorldHint: false,
} as const;

/** A tool's id argument (of a checkout, cart or order). */
export const idArgument = (what: string) => ({
  type: 'string',
  minLength: 1,
  maxLength: 200,
  description: `The ${what} id.`,
});

export interface UcpToolSpec extends Omit<UcpToolDefinition, 'inputSchema' | 'annotations' | 'body'> {
  title: string;
  hints: Omit<ToolAnnotations, 'title'>;
  /** Whether meta["idempotency-key"] is required. */
  keyed?: boolean;
  /** The id argument, when the tool acts on one resource. */
  id?: object;
  /** The body argument and its schema. */
  body?: { name: UcpToolBody; schema: object };
}

/** A tool definition: `meta`, then `id` and the body argument when the tool takes them, all required. */
export function defineUcpTool({ title, hints, keyed, id, body, ...rest }: UcpToolSpec): UcpToolDefinition {
  return {
    ...rest,
    ...(body ? { body: body.name } : {}),
    annotations: { title, ...hints },
    inputSchema: {
      type: 'object',
      required: ['meta', ...(id ? ['id'] : []), ...(body ? [body.name] : [])],
      properties: {
        meta: ucpToolMeta(keyed ? ['ucp-agent', 'idempotency-key'] : ['ucp-agent']),
        ...(id ? { id } : {}),
        ...(body ? { [body.name]: body.schema } : {}),
      },
    },
  };
}
