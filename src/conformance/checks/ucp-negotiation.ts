// UCP capability and version negotiation: the merchant reads the platform profile named in UCP-Agent (REST) or
// meta.ucp-agent (MCP) and answers with the intersection of both sides' capabilities, or refuses what it cannot serve.
import type { Json } from '../client.js';
import { expectThat, skip, type Check } from './check.js';
import { ucpCreateBody, ucpSpec, type UcpContext } from './ucp-context.js';

const DISCOUNT = 'dev.ucp.shopping.discount';

/** The served profiles are needed; a user's --profile-url gives only the full one. */
function profile(context: UcpContext, which: 'noDiscount' | 'noCheckout' | 'unsupportedVersion' | 'missing'): string {
  const url = context.profiles[which];
  if (!url) skip('needs the platform profiles the runner serves (an external --profile-url was given)');
  return url;
}

const strictOnly = (context: UcpContext) => {
  if (context.lenient) skip('the merchant is declared lenient (--lenient): it proceeds without a usable profile');
};

export const ucpNegotiationChecks: Check<UcpContext>[] = [
  {
    id: 'ucp.negotiation.capabilities',
    title: 'the answer names the negotiated capabilities, checkout among them, at the tested version',
    spec: ucpSpec('overview', 'Capability Negotiation'),
    async run(context) {
      const created = await context.transport.create(ucpCreateBody(context));
      const capabilities: Json = created.body?.ucp?.capabilities ?? {};
      expectThat(
        capabilities['dev.ucp.shopping.checkout']?.some?.((entry: Json) => entry.version === context.version),
        `ucp.capabilities with dev.ucp.shopping.checkout at ${context.version}`,
        created.answer,
      );
      const extra = Object.keys(capabilities).filter((name) => !context.capabilities.has(name));
      expectThat(extra.length === 0, 'only capabilities the merchant advertises', created.answer);
    },
  },
  {
    id: 'ucp.negotiation.intersection',
    title: 'a capability the platform does not declare (discount) is not used',
    spec: ucpSpec('overview', 'Capability Negotiation (intersection)'),
    async run(context) {
      if (!context.capabilities.has(DISCOUNT)) skip('the merchant does not advertise dev.ucp.shopping.discount');
      const code = context.fixture.promo_codes?.valid?.[0] ?? context.fixture.promo_codes?.invalid?.[0] ?? 'ANYCODE';
      const created = await context.transport.create(ucpCreateBody(context, { discounts: { codes: [code] } }), {
        profile: profile(context, 'noDiscount'),
      });
      expectThat(!created.protocolError && created.body?.id, 'a created checkout', created.answer);
      expectThat(
        !created.body.ucp?.capabilities?.[DISCOUNT] && !created.body.discounts?.applied?.length,
        'no dev.ucp.shopping.discount in ucp.capabilities and no discount applied',
        created.answer,
      );
    },
  },
  {
    id: 'ucp.negotiation.no-checkout',
    title: 'a platform without the checkout capability gets no checkout (an error, not a created checkout)',
    spec: ucpSpec('overview', 'Capability Negotiation (capabilities_incompatible)'),
    async run(context) {
      strictOnly(context);
      const answer = await context.transport.create(ucpCreateBody(context), {
        profile: profile(context, 'noCheckout'),
      });
      expectThat(
        answer.protocolError || answer.body?.ucp?.status === 'error',
        'an error (ucp.status error or a protocol error), no checkout',
        answer.answer,
      );
    },
  },
  {
    id: 'ucp.negotiation.unsupported-version',
    title: 'a platform profile at a version the merchant does not support is refused',
    spec: ucpSpec('overview', 'Version Negotiation (version_unsupported)'),
    async run(context) {
      strictOnly(context);
      const answer = await context.transport.create(ucpCreateBody(context), {
        profile: profile(context, 'unsupportedVersion'),
      });
      expectThat(
        answer.protocolError || answer.body?.ucp?.status === 'error',
        'an error (version_unsupported), no checkout',
        answer.answer,
      );
    },
  },
  {
    id: 'ucp.negotiation.unreachable-profile',
    title: 'a platform profile that cannot be fetched is refused',
    spec: ucpSpec('overview', 'Profile Resolution (profile_unreachable)'),
    async run(context) {
      strictOnly(context);
      const answer = await context.transport.create(ucpCreateBody(context), { profile: profile(context, 'missing') });
      expectThat(
        answer.protocolError || answer.body?.ucp?.status === 'error',
        'an error (profile_unreachable), no checkout',
        answer.answer,
      );
    },
  },
];
