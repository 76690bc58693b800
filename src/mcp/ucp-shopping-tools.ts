// The /ucp/mcp tools of UCP's catalog and cart capabilities (mcp.openrpc.json: search_catalog, lookup_catalog,
// get_product; create_cart, get_cart, update_cart, cancel_cart), beside the checkout's five (src/mcp/ucp-server.ts).
// Each runs exactly what its REST operation runs; `catalog` or `cart` carries the request body, and the result is the
// REST body as structuredContent, described by UCP's own response schema.
import type { UcpShoppingOperation } from '../domain/ucp-shopping.js';
import { ucpRequestSchemaOf, ucpResponseSchema } from './ucp-schemas.js';
import { CANCELS, idArgument, READS, defineUcpTool, WRITES, type UcpToolDefinition } from './ucp-tool-definitions.js';

const id = idArgument('cart');

const ERROR_RESPONSE = 'shopping/types/error_response.json';
const cartResult = () =>
  ucpResponseSchema(
    ['shopping/cart.json', ERROR_RESPONSE],
    "A UCP cart, or UCP's error_response (rest.openapi.json cart_response); the same body the REST binding answers.",
  );

export const UCP_SHOPPING_TOOLS: Record<UcpShoppingOperation, UcpToolDefinition> = {
  search_catalog: defineUcpTool({
    op: 'search_catalog',
    title: 'Search the catalog',
    hints: READS,
    description:
      'Search the catalogue: every word of query in the title or description, filters.categories (ids or handles), filters.price (minor units), priced in the market of context.address_country; pages of pagination.limit (10, at most 50) with pagination.cursor.',
    body: {
      name: 'catalog',
      schema: ucpRequestSchemaOf('ucp.catalog_search', 'The search request (catalog_search.json search_request).'),
    },
    outputSchema: ucpResponseSchema(
      ['shopping/catalog_search.json#/$defs/search_response'],
      'A page of products (catalog_search.json search_response).',
    ),
  }),
  lookup_catalog: defineUcpTool({
    op: 'lookup_catalog',
    title: 'Look up products',
    hints: READS,
    description:
      'Look up products and variants by ids (product ids or handles: the product with its featured variant; variant ids or SKUs: that variant); each variant names the inputs that resolved to it. filters.categories and filters.price narrow the products and variants answered.',
    body: {
      name: 'catalog',
      schema: ucpRequestSchemaOf('ucp.catalog_lookup', 'The lookup request (catalog_lookup.json lookup_request).'),
    },
    outputSchema: ucpResponseSchema(
      ['shopping/catalog_lookup.json#/$defs/lookup_response'],
      'The products found (catalog_lookup.json lookup_response).',
    ),
  }),
  get_product: defineUcpTool({
    op: 'get_product',
    title: 'Get a product',
    hints: READS,
    description:
      'One product in detail by product id or handle, or variant id or SKU (that variant selected), with its variants and options; selected ({name: Variant, label}) picks a variant, filters.price narrows the variants.',
    body: {
      name: 'catalog',
      schema: ucpRequestSchemaOf('ucp.get_product', 'The request (catalog_lookup.json get_product_request).'),
    },
    outputSchema: ucpResponseSchema(
      ['shopping/catalog_lookup.json#/$defs/get_product_response', ERROR_RESPONSE],
      "The product (catalog_lookup.json get_product_response), or UCP's error_response.",
    ),
  }),
  create_cart: defineUcpTool({
    op: 'create_cart',
    title: 'Create a cart',
    hints: { ...WRITES, idempotentHint: false },
    description:
      'Create a cart from line_items ({item: {id: variant_…}, quantity}), with optional buyer, context.address_country and discounts.codes (when dev.ucp.shopping.discount is negotiated, priced as a checkout). Convert it with create_checkout {cart_id}.',
    body: { name: 'cart', schema: ucpRequestSchemaOf('ucp.create', 'The create request (cart.json, create fields).') },
    outputSchema: cartResult(),
  }),
  get_cart: defineUcpTool({
    op: 'get_cart',
    title: 'Get a cart',
    hints: READS,
    description: 'Get a cart, priced now.',
    id,
    outputSchema: cartResult(),
  }),
  update_cart: defineUcpTool({
    op: 'update_cart',
    title: 'Replace a cart',
    hints: { ...WRITES, idempotentHint: true },
    description:
      'Replace a cart: line_items (known line ids are kept), buyer and discounts.codes (when discount is negotiated); absent buyer or codes are cleared.',
    id,
    body: { name: 'cart', schema: ucpRequestSchemaOf('ucp.update', 'The update request (cart.json, update fields).') },
    outputSchema: cartResult(),
  }),
  cancel_cart: defineUcpTool({
    op: 'cancel_cart',
    title: 'Cancel a cart',
    hints: CANCELS,
    description: 'Cancel a cart: it is deleted (final); the answer is the cart as it was.',
    keyed: true,
    id,
    outputSchema: cartResult(),
  }),
};
