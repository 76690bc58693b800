// The agent catalogue API (scope catalog:read, enforced from the contract by src/http/agent-auth.ts). Answers are
// per client and never cached.
import type { operations } from '../../../codegen/types.js';
import type { Deps } from '../../deps.js';
import type { OperationHandlers } from '../../http/openapi.js';
import * as agentCatalog from '../../services/agent-catalog.js';
import * as catalog from '../../services/catalog.js';

type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
type Path<Op extends keyof operations> = operations[Op]['parameters']['path'];

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
    async listAgentProducts(c, ctx) {
      const query = c.request.query as Query<'listAgentProducts'>;
      ctx.body = await agentCatalog.listProducts(db, {
        q: query.q,
        collection: query.collection,
        category: query.category,
        limit: query.limit ?? 12,
        offset: query.offset ?? 0,
        regionId: query.region_id,
      });
    },
    async getAgentProduct(c, ctx) {
      const { id_or_handle } = c.request.params as Path<'getAgentProduct'>;
      const query = c.request.query as Query<'getAgentProduct'>;
      ctx.body = { product: await agentCatalog.getProduct(db, id_or_handle, query.region_id) };
    },
    async listAgentCollections(_c, ctx) {
      ctx.body = await catalog.listCollections(db, undefined);
    },
    async listAgentCategories(_c, ctx) {
      ctx.body = await agentCatalog.listCategories(db);
    },
    async listAgentRegions(_c, ctx) {
      ctx.body = await catalog.listRegions(db);
    },
    async listAgentReviews(c, ctx) {
      const query = c.request.query as Query<'listAgentReviews'>;
      ctx.body = await agentCatalog.listReviews(db, query.product);
    },
  };
}
