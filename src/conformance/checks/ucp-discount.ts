// UCP discount capability (dev.ucp.shopping.discount, extends checkout): a valid code is applied and shows in the
// totals; an invalid one is a warning on its path, never an error status. Codes come from the fixture.
import type { Json } from '../client.js';
import { expectThat, skip, type Check } from './check.js';
import { ucpCreateBody, ucpSpec, type UcpContext } from './ucp-context.js';
import { createCheckout } from './ucp-checkout.js';

export const ucpDiscountChecks: Check<UcpContext>[] = [
  {
    id: 'ucp.discount.valid-code',
    title: 'a valid code is applied: discounts.applied names it and a negative discount total shows',
    spec: ucpSpec('discount', 'Applying Discounts'),
    async run(context) {
      const code = context.fixture.promo_codes?.valid?.[0];
      if (!code) skip('the fixture has no promo_codes.valid');
      const created = await createCheckout(context, { discounts: { codes: [code] } });
      const applied: Json[] = created.body.discounts?.applied ?? [];
      expectThat(
        applied.some((entry) => String(entry.code).toLowerCase() === code.toLowerCase()),
        `discounts.applied with ${code}`,
        created.answer,
      );
      const totals: Json[] = created.body.totals ?? [];
      expectThat(
        totals.some((total) => (total.type === 'items_discount' || total.type === 'discount') && total.amount < 0),
        'a negative items_discount or discount total',
        created.answer,
      );
    },
  },
  {
    id: 'ucp.discount.invalid-code',
    title: 'an invalid code is a warning at $.discounts.codes[0], and the checkout is still created',
    spec: ucpSpec('discount', 'Rejected Codes (warnings)'),
    async run(context) {
      const code = context.fixture.promo_codes?.invalid?.[0] ?? 'CONFORMANCE-NO-SUCH-CODE';
      const created = await context.transport.create(ucpCreateBody(context, { discounts: { codes: [code] } }));
      expectThat(!created.protocolError && created.body?.id, 'a created checkout', created.answer);
      const messages: Json[] = created.body.messages ?? [];
      expectThat(
        messages.some(
          (message) =>
            message.type === 'warning' &&
            message.path === '$.discounts.codes[0]' &&
            String(message.code).startsWith('discount_code_'),
        ),
        `a warning discount_code_… at $.discounts.codes[0] for ${code}`,
        created.answer,
      );
      expectThat(
        !(created.body.discounts?.applied ?? []).some((entry: Json) => entry.code === code),
        `${code} not applied`,
        created.answer,
      );
    },
  },
];
