// UCP order (dev.ucp.shopping.order) over REST: what any merchant can be asked without a paid order of its own. An
// order the platform did not create (here: an id no merchant has) is a business outcome, 200 with order_response's
// error_response naming `not_found` (rest.openapi.json get_order answers 200 only), never a 404 or a 5xx.
import { randomUUID } from 'node:crypto';
import { expectThat, type Check } from './check.js';
import { ucpSpec, type UcpContext } from './ucp-context.js';

export const ORDER = 'dev.ucp.shopping.order';

type OrderContext = UcpContext & { restEndpoint?: string; profile: string };

export const ucpOrderChecks: Check<OrderContext>[] = [
  {
    id: 'ucp.order.unknown',
    title: 'an order the platform did not create is a 200 error_response with not_found',
    spec: ucpSpec('order', 'Get Order'),
    async run(context) {
      expectThat(context.restEndpoint, 'a REST endpoint for orders');
      const answer = await context.client.request(
        `${context.restEndpoint.replace(/\/+$/, '')}/orders/${encodeURIComponent(`conformance-${randomUUID()}`)}`,
        {
          method: 'GET',
          headers: {
            'UCP-Agent': `profile="${context.profile}"`,
            'Request-Id': randomUUID(),
            Accept: 'application/json',
          },
        },
      );
      expectThat(answer.status === 200, '200 (get_order answers business outcomes with 200)', answer);
      const problems = context.schemas.problems('order_response', answer.body);
      expectThat(
        problems.length === 0,
        `a body valid against UCP ${context.version} order_response`,
        answer,
        `${problems.length} schema errors, first: ${problems[0]?.path} ${problems[0]?.message}`,
      );
      const codes = ((answer.body?.messages ?? []) as Array<{ type?: string; code?: string }>)
        .filter((message) => message.type === 'error')
        .map((message) => message.code);
      expectThat(
        answer.body?.ucp?.status === 'error' && codes.includes('not_found'),
        'ucp.status error with an error message not_found',
        answer,
      );
    },
  },
];
