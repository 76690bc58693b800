// The catalog MCP server: read-only tools over the same catalogue functions the REST and agent APIs call, so a
// tool's answer equals the REST answer to the same question. Products come as the agent API serves them: always with
// prices and stock, found by text, collection, id or handle. Like the REST catalogue, the catalogue tools answer from
// the process's read cache: an answer may be up to 60 s old, counted from its query's start.
import type { components } from '../../codegen/types.js';
import type { WebDeps as Deps } from '../http/web-deps.js';
import * as agentCatalog from '../services/agent-catalog.js';
import { listCollections, listRegions } from '../services/catalog.js';
import { createMcpServer, type McpServer } from './rpc.js';
import type { ContractSchemas, ObjectSchema } from './schemas.js';
import { storePolicies, storePoliciesSchema } from './store-policies.js';
import { defineTool, type Tool, type ToolDefinition } from './tools.js';

type Parameters = components['parameters'];

const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;

const INSTRUCTIONS =
  'Catalog of a store selling one product line, a medical-grade stainless steel tongue scraper, in two variants. ' +
  'All amounts are major units (9.99 means 9.99 of the currency); catalog prices exclude tax. ' +
  'Prices depend on the region: list_regions gives the ids, and every tool defaults to the United States (USD). ' +
  'To buy, use the checkout MCP server (/checkout/mcp) with the variant ids found here.';

const REGION_ID =
  'Region whose currency and prices apply, from list_regions (e.g. reg_eu). Default: United States (USD).';

/** Strict, as the REST API rejects unknown query parameters: a misspelt `region` must not silently price elsewhere. */
function strictArguments<T>(properties: Record<string, unknown>, required: string[] = []): ObjectSchema<T> {
  return { type: 'object', properties, required, additionalProperties: false } as ObjectSchema<T>;
}

// Each argument has the schema of the agent API's parameter it stands for (same pattern, lengths and range), so an
// MCP call accepts exactly what the REST call accepts.
interface SearchArguments {
  query?: Parameters['AgentSearchQuery'];
  collection?: Parameters['AgentCollectionFilter'];
  region_id?: Parameters['RegionId'];
  limit: NonNullable<Parameters['Limit']>;
  offset: NonNullable<Parameters['Offset']>;
}
/** The tools' inputs, from the contract's parameters. */
function catalogInputs(contract: ContractSchemas) {
  const searchInput = strictArguments<SearchArguments>({
    query: contract.parameter(
      'AgentSearchQuery',
      "Free text; every word must occur in the product's title or description. Omit to list everything.",
    ),
    collection: contract.parameter(
      'AgentCollectionFilter',
      'Only products in this collection: a handle or id from list_collections.',
    ),
    region_id: contract.parameter('RegionId', REGION_ID),
    limit: contract.parameter('Limit', 'Page size, 1 to 100.'),
    offset: contract.parameter('Offset', 'Products to skip, for paging.'),
  });

  const getProductInput = strictArguments<{
    product: Parameters['AgentProductIdOrHandle'];
    region_id?: Parameters['RegionId'];
  }>(
    {
      product: contract.parameter(
        'AgentProductIdOrHandle',
        "The product's handle (URL slug, e.g. tongue-scraper-2-pack; preferred) or id (prefix prod_).",
      ),
      region_id: contract.parameter('RegionId', REGION_ID),
    },
    ['product'],
  );
  const listReviewsInput = strictArguments<{ product?: Parameters['AgentReviewProductFilter'] }>({
    product: contract.parameter(
      'AgentReviewProductFilter',
      "Only this product's reviews: its handle or id. Omit for the whole store.",
    ),
  });
  const noInput = strictArguments<Record<string, never>>({});
  const listCollectionsInput = strictArguments<{ handle?: Parameters['CollectionHandleFilter'] }>({
    handle: contract.parameter('CollectionHandleFilter', 'Only the collection with this handle.'),
  });
  const storePoliciesInput = strictArguments<{ region_id?: Parameters['RegionId'] }>({
    region_id: contract.parameter('RegionId', REGION_ID),
  });
  return { searchInput, getProductInput, listReviewsInput, noInput, listCollectionsInput, storePoliciesInput };
}

/** Said in each cached tool's description, as the REST catalogue says it of its reads. */
const UP_TO_60_S_OLD = ' Results may be up to 60 s old.';

/** A tool whose results are kept in the read cache (defineTool); only for tools whose answer is the same for everyone. */
function defineCachedTool<In, Out>(deps: Deps, definition: ToolDefinition<In, Out>): Tool {
  return defineTool(
    { ...definition, description: definition.description + UP_TO_60_S_OLD },
    deps.validators,
    deps.readCache,
  );
}

/** What to do about a bad argument, in terms of this server's tools. */
const ADVICE = {
  region_id: 'Use an id from list_regions, or omit region_id for the United States (USD).',
  collection: 'Use a handle or id from list_collections.',
  product: 'Find products with search_products.',
};

function catalogTools(deps: Deps, contract: ContractSchemas): Tool[] {
  const { db } = deps;
  const { searchInput, getProductInput, listReviewsInput, noInput, listCollectionsInput, storePoliciesInput } =
    catalogInputs(contract);
  return [
    defineCachedTool(deps, {
      name: 'search_products',
      title: 'Search products',
      description:
        "Finds products by free text and/or collection, with each variant's price in the region (calculated_price, major units, tax excluded) and stock (inventory_quantity). " +
        'Without arguments it lists the whole catalog. Use the variant ids to create a checkout session.',
      annotations: { title: 'Search products', ...READ_ONLY },
      advice: ADVICE,
      inputSchema: searchInput,
      outputSchema: contract.schema('ProductList'),
      run: (args) =>
        agentCatalog.listProducts(db, {
          q: args.query,
          collection: args.collection,
          regionId: args.region_id,
          limit: args.limit,
          offset: args.offset,
        }),
    }),
    defineCachedTool(deps, {
      name: 'get_product',
      title: 'Get a product',
      description:
        "Returns one product, by handle or id, with every variant's price in the region (tax excluded) and its stock.",
      annotations: { title: 'Get a product', ...READ_ONLY },
      advice: ADVICE,
      inputSchema: getProductInput,
      outputSchema: contract.schema('ProductEnvelope'),
      lookupArgument: 'product',
      run: async (args) => ({ product: await agentCatalog.getProduct(db, args.product, args.region_id) }),
    }),
    defineCachedTool(deps, {
      name: 'list_reviews',
      title: 'List reviews',
      description:
        'Lists customer reviews, newest first, with their count and avg_rating (1 to 5; 0 when there are none), for one product or the whole store. verified means tied to a real purchase.',
      annotations: { title: 'List reviews', ...READ_ONLY },
      advice: ADVICE,
      inputSchema: listReviewsInput,
      outputSchema: contract.schema('ReviewList'),
      lookupArgument: 'product',
      run: (args) => agentCatalog.listReviews(db, args.product),
    }),
    defineCachedTool(deps, {
      name: 'list_regions',
      title: 'List regions',
      description:
        'Lists the regions the store sells in, with their currency and countries. Pass a region id as region_id to price in that region.',
      annotations: { title: 'List regions', ...READ_ONLY },
      inputSchema: noInput,
      outputSchema: contract.schema('RegionList'),
      run: () => listRegions(db),
    }),
    defineCachedTool(deps, {
      name: 'list_collections',
      title: 'List collections',
      description: 'Lists the product collections; pass a collection handle to search_products to list its products.',
      annotations: { title: 'List collections', ...READ_ONLY },
      inputSchema: listCollectionsInput,
      outputSchema: contract.schema('CollectionList'),
      run: (args) => listCollections(db, args.handle),
    }),
    defineTool(
      {
        name: 'get_store_policies',
        title: 'Shipping, tax and returns',
        description:
          "The store's shipping rate and free-shipping threshold, tax rate and returns policy, per region (all regions, or the one given). " +
          "Use it to answer shoppers' questions about delivery costs, tax and returns; checkout totals follow exactly these rules.",
        annotations: { title: 'Shipping, tax and returns', ...READ_ONLY },
        advice: ADVICE,
        inputSchema: storePoliciesInput,
        outputSchema: storePoliciesSchema,
        run: (args) => storePolicies(db, args.region_id),
      },
      deps.validators,
    ),
  ];
}

export function createCatalogServer(deps: Deps, contract: ContractSchemas): McpServer {
  return createMcpServer({
    name: 'storefront-catalog',
    title: 'Storefront catalog',
    version: '1.0.0',
    instructions: INSTRUCTIONS,
    tools: catalogTools(deps, contract),
  });
}
