// The catalog MCP server: read-only tools over the same catalogue functions the REST and agent APIs call, so a
// tool's answer equals the REST answer to the same question. Products come as the agent API serves them: always with
// prices and stock, found by text, collection, id or handle.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import type { Deps } from '../deps.js';
import * as agentCatalog from '../services/agent-catalog.js';
import { listCollections, listRegions } from '../services/catalog.js';
import { contractParameter, contractSchema } from './schemas.js';
import { storePolicies, storePoliciesSchema } from './store-policies.js';
import { jsonSchemaValidator, registerTool } from './tools.js';

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const INSTRUCTIONS =
  'Catalog of a store selling one product line, a medical-grade stainless steel tongue scraper, in two variants. ' +
  'All amounts are major units (9.99 means 9.99 of the currency); catalog prices exclude tax. ' +
  'Prices depend on the region: list_regions gives the ids, and every tool defaults to the United States (USD). ' +
  'To buy, use the checkout MCP server (/checkout/mcp) with the variant ids found here.';

const regionId = contractParameter('RegionId').describe(
  'Region whose currency and prices apply, from list_regions (e.g. reg_eu). Default: United States (USD).',
);

// Inputs are strict, as the REST API rejects unknown query parameters: a misspelt `region` must not silently price
// in the default region. Each argument has the schema of the agent API's parameter it stands for (same pattern,
// lengths and range), so an MCP call accepts exactly what the REST call accepts.
const searchInput = z.strictObject({
  query: contractParameter('AgentSearchQuery')
    .optional()
    .describe("Free text; every word must occur in the product's title or description. Omit to list everything."),
  collection: contractParameter('AgentCollectionFilter')
    .optional()
    .describe('Only products in this collection: a handle or id from list_collections.'),
  region_id: regionId.optional(),
  limit: contractParameter('Limit').describe('Page size, 1 to 100.'),
  offset: contractParameter('Offset').describe('Products to skip, for paging.'),
});

const product = contractParameter('AgentProductIdOrHandle').describe(
  "The product's handle (URL slug, e.g. tongue-scraper-2-pack; preferred) or id (prefix prod_).",
);

// Input schemas are built once per process: zod schemas are immutable, and building them for every request's fresh
// server cost more than the rest of the server's set-up.
const getProductInput = z.strictObject({ product, region_id: regionId.optional() });
const listReviewsInput = z.strictObject({
  product: contractParameter('AgentReviewProductFilter')
    .optional()
    .describe("Only this product's reviews: its handle or id. Omit for the whole store."),
});
const noInput = z.strictObject({});
const listCollectionsInput = z.strictObject({
  handle: contractParameter('CollectionHandleFilter').optional().describe('Only the collection with this handle.'),
});
const storePoliciesInput = z.strictObject({ region_id: regionId.optional() });

function registerCatalogTools(server: McpServer, deps: Deps): void {
  const { db, log } = deps;
  registerTool(server, log, {
    name: 'search_products',
    title: 'Search products',
    description:
      "Finds products by free text and/or collection, with each variant's price in the region (calculated_price, major units, tax excluded) and stock (inventory_quantity). " +
      'Without arguments it lists the whole catalog. Use the variant ids to create a checkout session.',
    annotations: { title: 'Search products', ...READ_ONLY },
    inputSchema: searchInput,
    outputSchema: contractSchema('ProductList'),
    run: (args) =>
      agentCatalog.listProducts(db, {
        q: args.query,
        collection: args.collection,
        regionId: args.region_id,
        limit: args.limit,
        offset: args.offset,
      }),
  });
  registerTool(server, log, {
    name: 'get_product',
    title: 'Get a product',
    description:
      "Returns one product, by handle or id, with every variant's price in the region (tax excluded) and its stock.",
    annotations: { title: 'Get a product', ...READ_ONLY },
    inputSchema: getProductInput,
    outputSchema: contractSchema('ProductEnvelope'),
    lookupArgument: 'product',
    run: async (args) => ({ product: await agentCatalog.getProduct(db, args.product, args.region_id) }),
  });
  registerTool(server, log, {
    name: 'list_reviews',
    title: 'List reviews',
    description:
      'Lists customer reviews, newest first, with their count and avg_rating (1 to 5; 0 when there are none), for one product or the whole store. verified means tied to a real purchase.',
    annotations: { title: 'List reviews', ...READ_ONLY },
    inputSchema: listReviewsInput,
    outputSchema: contractSchema('ReviewList'),
    lookupArgument: 'product',
    run: (args) => agentCatalog.listReviews(db, args.product),
  });
  registerTool(server, log, {
    name: 'list_regions',
    title: 'List regions',
    description:
      'Lists the regions the store sells in, with their currency and countries. Pass a region id as region_id to price in that region.',
    annotations: { title: 'List regions', ...READ_ONLY },
    inputSchema: noInput,
    outputSchema: contractSchema('RegionList'),
    run: () => listRegions(db),
  });
  registerTool(server, log, {
    name: 'list_collections',
    title: 'List collections',
    description: 'Lists the product collections; pass a collection handle to search_products to list its products.',
    annotations: { title: 'List collections', ...READ_ONLY },
    inputSchema: listCollectionsInput,
    outputSchema: contractSchema('CollectionList'),
    run: (args) => listCollections(db, args.handle),
  });
  registerTool(server, log, {
    name: 'get_store_policies',
    title: 'Shipping, tax and returns',
    description:
      "The store's shipping rate and free-shipping threshold, tax rate and returns policy, per region (all regions, or the one given). " +
      "Use it to answer shoppers' questions about delivery costs, tax and returns; checkout totals follow exactly these rules.",
    annotations: { title: 'Shipping, tax and returns', ...READ_ONLY },
    inputSchema: storePoliciesInput,
    outputSchema: storePoliciesSchema,
    run: (args) => storePolicies(db, args.region_id),
  });
}

export function createCatalogServer(deps: Deps): McpServer {
  const server = new McpServer(
    { name: 'storefront-catalog', title: 'Storefront catalog', version: '1.0.0' },
    { instructions: INSTRUCTIONS, jsonSchemaValidator },
  );
  registerCatalogTools(server, deps);
  return server;
}
