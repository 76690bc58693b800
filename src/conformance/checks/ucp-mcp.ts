// UCP's MCP binding (mcp.openrpc.json): the tools of each advertised capability are listed, and a checkout made over
// MCP is the one REST answers (when the merchant offers both).
import type { Json } from '../client.js';
import { expectThat, skip, type Check } from './check.js';
import { ucpSpec, type UcpContext } from './ucp-context.js';
import { createCheckout } from './ucp-checkout.js';
import type { McpSession, UcpTransport } from './ucp-transport.js';

/** The MCP tools each capability brings (mcp.openrpc.json). */
export const MCP_TOOLS: Record<string, string[]> = {
  'dev.ucp.shopping.checkout': [
    'create_checkout',
    'get_checkout',
    'update_checkout',
    'complete_checkout',
    'cancel_checkout',
  ],
  'dev.ucp.shopping.cart': ['create_cart', 'get_cart', 'update_cart', 'cancel_cart'],
  'dev.ucp.shopping.catalog.search': ['search_catalog'],
  'dev.ucp.shopping.catalog.lookup': ['lookup_catalog', 'get_product'],
  'dev.ucp.shopping.order': ['get_order'],
};

export interface UcpMcpContext extends UcpContext {
  session: McpSession;
  /** The REST transport, when the merchant offers it too. */
  rest?: UcpTransport;
}

export const ucpMcpChecks: Check<UcpMcpContext>[] = [
  {
    id: 'ucp.mcp.tools',
    title: 'tools/list lists the tools of every advertised capability',
    spec: ucpSpec('checkout-mcp', 'Tools'),
    async run(context) {
      const { answer, message } = await context.session.rpc('tools/list', {});
      const tools: Json[] = message?.result?.tools ?? [];
      expectThat(answer.status === 200 && Array.isArray(message?.result?.tools), '200 with result.tools', answer);
      const names = new Set(tools.map((tool) => tool.name));
      const wanted = [...context.capabilities].flatMap((capability) => MCP_TOOLS[capability] ?? []);
      const missing = wanted.filter((name) => !names.has(name));
      expectThat(missing.length === 0, `tools ${wanted.join(', ')}`, answer, `missing ${missing.join(', ')}`);
    },
  },
  {
    id: 'ucp.mcp.same-as-rest',
    title: 'a checkout created over MCP reads the same over REST',
    spec: ucpSpec('overview', 'Transports (one checkout, several bindings)'),
    async run(context) {
      if (!context.rest) skip('the merchant advertises no REST transport to compare with');
      const created = await createCheckout(context);
      const read = await context.rest.get(created.body.id);
      expectThat(
        read.status === 200 &&
          read.body?.id === created.body.id &&
          JSON.stringify(read.body.totals) === JSON.stringify(created.body.totals),
        `200 with checkout ${created.body.id} and the same totals`,
        read.answer,
      );
    },
  },
];
