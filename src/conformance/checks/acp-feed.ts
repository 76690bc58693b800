// ACP's product feed (schema.feed.json): the merchant's feed at `{api_base_url}/feed/products` is a ProductsResponse,
// and a variant it lists can be bought (a checkout session of it is created). Run when the merchant serves a feed
// there (the discovery document does not name a feed URL).
import type { Json } from '../client.js';
import { CheckFailure, expectThat, type Check } from './check.js';
import { acpCall, acpToken, type AcpContext } from './acp-context.js';

const acpFeedSpec = (section: string) =>
  `ACP {version}, schema.feed.json › ${section} (https://github.com/agentic-commerce-protocol/agentic-commerce-protocol/tree/main/spec/{version})`;

export interface AcpFeedContext extends AcpContext {
  feedUrl: string;
}

async function readFeed(context: AcpFeedContext) {
  const answer = await context.client.request(context.feedUrl, { headers: { Accept: 'application/json' } });
  expectThat(answer.status === 200, '200 with the feed', answer);
  const problems = context.schemas.problems('feed.ProductsResponse', answer.body);
  if (problems.length) {
    context.onSchemaErrors(problems.length);
    throw new CheckFailure(
      `expected a feed valid against ACP ${context.version} ProductsResponse; ${problems.length} schema errors, first: ${problems[0]!.path} ${problems[0]!.message}`,
    );
  }
  return answer;
}

export const acpFeedChecks: Check<AcpFeedContext>[] = [
  {
    id: 'acp.feed.products',
    title: 'the feed is a ProductsResponse with at least one product',
    spec: acpFeedSpec('ProductsResponse'),
    async run(context) {
      const answer = await readFeed(context);
      expectThat(answer.body.products.length > 0, 'at least one product', answer);
    },
  },
  {
    id: 'acp.feed.buyable',
    title: 'a variant the feed lists can be bought: a checkout session of it is created',
    spec: acpFeedSpec('Variant.id, and openapi.agentic_checkout.yaml › POST /checkout_sessions'),
    async run(context) {
      acpToken(context);
      const answer = await readFeed(context);
      const variant: Json = answer.body.products.flatMap((product: Json) => product.variants ?? [])[0];
      expectThat(variant?.id, 'a product with a variant', answer);
      const created = await acpCall(context, 'POST', '/checkout_sessions', {
        line_items: [{ id: variant.id, quantity: 1 }],
        currency: context.currency,
        capabilities: {},
      });
      expectThat(
        created.status === 201 && created.body?.line_items?.[0]?.item?.id === variant.id,
        `201 with a session of ${variant.id}`,
        created,
      );
    },
  },
];
