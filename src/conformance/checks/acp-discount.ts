// ACP discount extension (schema.discount.json): a valid code is applied, an invalid one is listed in
// discounts.rejected with a discount_code_… reason, and the session is still created. Codes come from the fixture.
import type { Json } from '../client.js';
import { expectThat, skip, type Check } from './check.js';
import { acpSpec, type AcpContext } from './acp-context.js';
import { createSession } from './acp-checkout.js';

export const acpDiscountChecks: Check<AcpContext>[] = [
  {
    id: 'acp.discount.valid-code',
    title: 'a valid code is applied: discounts.applied names it and items_discount is positive',
    spec: acpSpec('extension discount › discounts.applied'),
    async run(context) {
      const code = context.fixture.promo_codes?.valid?.[0];
      if (!code) skip('the fixture has no promo_codes.valid');
      const created = await createSession(context, { discounts: { codes: [code] } });
      const applied: Json[] = created.body.discounts?.applied ?? [];
      expectThat(
        applied.some((entry) => String(entry.code).toLowerCase() === code.toLowerCase()),
        `discounts.applied with ${code}`,
        created,
      );
      const discount = (created.body.totals ?? []).find((total: Json) => total.type === 'items_discount');
      expectThat(discount?.amount > 0, 'an items_discount total above 0', created);
    },
  },
  {
    id: 'acp.discount.invalid-code',
    title: 'an invalid code is in discounts.rejected with a discount_code_… reason',
    spec: acpSpec('extension discount › discounts.rejected'),
    async run(context) {
      const code = context.fixture.promo_codes?.invalid?.[0] ?? 'CONFORMANCE-NO-SUCH-CODE';
      const created = await createSession(context, { discounts: { codes: [code] } });
      const rejected: Json[] = created.body.discounts?.rejected ?? [];
      expectThat(
        rejected.some((entry) => entry.code === code && String(entry.reason).startsWith('discount_code_')),
        `discounts.rejected with ${code} and a discount_code_… reason`,
        created,
      );
    },
  },
];
