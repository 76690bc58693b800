// The /ucp/mcp tools of UCP's catalog and cart capabilities (mcp.openrpc.json: search_catalog, lookup_catalog,
// get_product; create_cart, get_cart, update_cart, cancel_cart), beside the checkout's five (src/mcp/ucp-server.ts).
// Each runs exactly what its REST operation runs; `catalog` or `cart` carries the request body, and the result is the
// REST body as structuredContent, described by UCP's own response schema.
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { UcpOperation } from '../handlers/ucp/checkout.js';
import type { UcpShoppingOperation } from '../domain/ucp-shopping.js';
import { ucpRequestSchemaOf, ucpResponseSchema, ucpToolMeta as meta } from './ucp-schemas.js';

export interface UcpToolDefinition {
  /** The operation the tool runs: the REST executor's, or `get_order`, the order reader's (GET /ucp/orders/{id}). */
  op: UcpOperation | UcpShoppingOperation | 'get_order';
  /** The argument that carries the request body (`checkout` unless said otherwise). */
  body?: 'checkout' | 'cart' | 'catalog';
  /** The result's schema (a checkout's unless said otherwise). */
  outputSchema?: object;
  description: string;
  /** The behaviour hints every MCP tool here carries (MCP ToolAnnotations). */
  annotations: ToolAnnotations;
  inputSchema: { type: 'object'; required: string[]; properties: Record<string, object> };
}

const READS = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
const WRITES = { readOnlyHint: false, destructiveHint: false, openWorldHint: false } as const;
const id = { type: 'string', minLength: 1, maxLength: 200, description: 'The cart id.' };

const ERROR_RESPONSE = 'shopping/types/error_response.json';
const cartResult = () =>
  ucpResponseSchema(
    ['shopping/cart.json', ERROR_RESPONSE],
    "A UCP cart, or UCP's error_response (rest.openapi.json cart_response); the same body the REST binding answers.",
  );

export const UCP_SHOPPING_TOOLS: Record<UcpShoppingOperation, UcpToolDefinition> = {
  search_catalog: {
    op: 'search_catalog',
    body: 'catalog',
    description:
      'Search the catalogue: every word of query in the title or description, filters.categories (ids or handles), filters.price (minor units), priced in the market of context.address_country; pages of pagination.limit (10, at most 50) with pagination.cursor.',
    annotations: { title: 'Search the catalog', ...READS },
    inputSchema: {
      type: 'object',
      required: ['meta', 'catalog'],
      properties: {
        meta: meta(['ucp-agent']),
        catalog: ucpRequestSchemaOf('ucp.catalog_search', 'The search request (catalog_search.json search_request).'),
      },
    },
    outputSchema: ucpResponseSchema(
      ['shopping/catalog_search.json#/$defs/search_response'],
      'A page of products (catalog_search.json search_response).',
    ),
  },
  lookup_catalog: {
    op: 'lookup_catalog',
    body: 'catalog',
    description:
      'Look up products and variants by ids (product ids or handles: the product with its featured variant; variant ids or SKUs: that variant); each variant names the inputs that resolved to it.',
    annotations: { title: 'Look up products', ...READS },
    inputSchema: {
      type: 'object',
      required: ['meta', 'catalog'],
      properties: {
        meta: meta(['ucp-agent']),
        catalog: ucpRequestSchemaOf('ucp.catalog_lookup', 'The lookup request (catalog_lookup.json lookup_request).'),
      },
    },
    outputSchema: ucpResponseSchema(
      ['shopping/catalog_lookup.json#/$defs/lookup_response'],
      'The products found (catalog_lookup.json lookup_response).',
    ),
  },
  get_product: {
    op: 'get_product',
    body: 'catalog',
    description:
      'One product in detail by product id or handle, or variant id or SKU (that variant selected), with its variants and options.',
    annotations: { title: 'Get a product', ...READS },
    inputSchema: {
      type: 'object',
      required: ['meta', 'catalog'],
      properties: {
        meta: meta(['ucp-agent']),
        catalog: ucpRequestSchemaOf('ucp.get_product', 'The request (catalog_lookup.json get_product_request).'),
      },
    },
    outputSchema: ucpResponseSchema(
      ['shopping/catalog_lookup.json#/$defs/get_product_response', ERROR_RESPONSE],
      "The product (catalog_lookup.json get_product_response), or UCP's error_response.",
    ),
  },
  create_cart: {
    op: 'create_cart',
    body: 'cart',
    description:
      'Create a cart from line_items ({item: {id: variant_…}, quantity}), with optional buyer and context.address_country. Convert it with create_checkout {cart_id}.',
    annotations: { title: 'Create a cart', ...WRITES, idempotentHint: false },
    inputSchema: {
      type: 'object',
      required: ['meta', 'cart'],
      properties: {
        meta: meta(['ucp-agent']),
        cart: ucpRequestSchemaOf('ucp.create', 'The create request (cart.json, create fields).'),
      },
    },
    outputSchema: cartResult(),
  },
  get_cart: {
    op: 'get_cart',
    description: 'Get a cart, priced now.',
    annotations: { title: 'Get a cart', ...READS },
    inputSchema: { type: 'object', required: ['meta', 'id'], properties: { meta: meta(['ucp-agent']), id } },
    outputSchema: cartResult(),
  },
  update_cart: {
    op: 'update_cart',
    body: 'cart',
    description: 'Replace a cart: line_items (known line ids are kept) and buyer; an absent buyer is cleared.',
    annotations: { title: 'Replace a cart', ...WRITES, idempotentHint: true },
    inputSchema: {
      type: 'object',
      required: ['meta', 'id', 'cart'],
      properties: {
        meta: meta(['ucp-agent']),
        id,
        cart: ucpRequestSchemaOf('ucp.update', 'The update request (cart.json, update fields).'),
      },
    },
    outputSchema: cartResult(),
  },
  cancel_cart: {
    op: 'cancel_cart',
    description: 'Cancel a cart: it is deleted (final); the answer is the cart as it was.',
    annotations: {
      title: 'Cancel a cart',
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
    inputSchema: {
      type: 'object',
      required: ['meta', 'id'],
      properties: { meta: meta(['ucp-agent', 'idempotency-key']), id },
    },
    outputSchema: cartResult(),
  },
};
