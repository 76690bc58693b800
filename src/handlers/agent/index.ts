// The agent catalogue API (scope catalog:read, enforced from the contract by src/http/agent-auth.ts). Answers are
// per client and never cached.
import type { Deps } from '../../deps.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as agentCatalog from '../../services/agent-catalog.js';
import * as catalog from '../../services/catalog.js';

type AgentCatalogHandlers = Pick<
  OperationHandlers,
  | 'listAgentProducts'
  | 'getAgentProduct'
  | 'listAgentCollections'
  | 'listAgentCategories'
  | 'listAgentRegions'
  | 'listAgentReviews'
>;

export function agentCatalogHandlers({ db }: Deps): AgentCatalogHandlers {
  return {
    async listAgentProducts({ query }) {
      const products = await agentCatalog.listProducts(db, {
        q: query.q,
        collection: query.collection,
        category: query.category,
        limit: query.limit ?? 12,
        offset: query.offset ?? 0,
        regionId: query.region_id,
      });
      return { status: 200, body: products };
    },
    async getAgentProduct({ path, query }) {
      return { status: 200, body: { product: await agentCatalog.getProduct(db, path.id_or_handle, query.region_id) } };
    },
    async listAgentCollections() {
      return { status: 200, body: await catalog.listCollections(db, undefined) };
    },
    async listAgentCategories() {
      return { status: 200, body: await agentCatalog.listCategories(db) };
    },
    async listAgentRegions() {
      return { status: 200, body: await catalog.listRegions(db) };
    },
    async listAgentReviews({ query }) {
      return { status: 200, body: await agentCatalog.listReviews(db, query.product) };
    },
  };
}
