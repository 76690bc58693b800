// The public resources the ACP and UCP bindings link to: the human hand-off payment handler's specification and its
// config schema (named in both protocols' payment handler declarations), and the return and shipping policy pages
// (the checkouts' `links`), generated from the same store facts the MCP tool `get_store_policies` serves.
import type { Deps } from '../../deps.js';
import { sendCacheable } from '../../http/caching.js';
import type { OperationHandlers } from '../../http/openapi.js';
import { storePolicies } from '../../mcp/store-policies.js';

const HANDOFF_SPEC = `# Human hand-off payment handler

This store takes payment only on its own secure page, never through the API.

- The handler accepts **no instrument**: nothing sent in \`payment\` (UCP) or \`payment_data\` (ACP) is stored or charged.
- Every checkout that can be paid is \`requires_escalation\`, with a \`continue_url\`.
- Send the buyer to \`continue_url\` to review and pay. Poll the checkout afterwards: a paid checkout is \`completed\` with its \`order\`.

Config: \`{"instruments_accepted": false, "handoff": "continue_url"}\`.
`;

const HANDOFF_CONFIG_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: 'Human hand-off payment handler config',
  type: 'object',
  required: ['instruments_accepted', 'handoff'],
  additionalProperties: false,
  properties: {
    instruments_accepted: { const: false, description: 'No payment instrument is accepted through the API.' },
    handoff: { const: 'continue_url', description: 'The buyer pays at the checkout continue_url.' },
  },
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

function page(title: string, paragraphs: string[]): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body><h1>${escapeHtml(title)}</h1>
${paragraphs.map((paragraph) => `<p>${escapeHtml(paragraph)}</p>`).join('\n')}
</body></html>`;
}

const HTML = 'text/html; charset=utf-8';

export function protocolResourceHandlers(
  deps: Deps,
): Pick<OperationHandlers, 'getHumanHandoffSpec' | 'getHumanHandoffSchema' | 'getReturnsPolicy' | 'getShippingPolicy'> {
  return {
    getHumanHandoffSpec: (_input, ctx) => sendCacheable(ctx, HANDOFF_SPEC, 'text/markdown; charset=utf-8'),
    getHumanHandoffSchema: (_input, ctx) => sendCacheable(ctx, HANDOFF_CONFIG_SCHEMA),
    async getReturnsPolicy(_input, ctx) {
      const { returns } = await storePolicies(deps.db, undefined);
      sendCacheable(ctx, page('Returns', [returns.policy]), HTML);
    },
    async getShippingPolicy(_input, ctx) {
      const { regions } = await storePolicies(deps.db, undefined);
      sendCacheable(
        ctx,
        page(
          'Shipping',
          regions.map((region) => `${region.name}: ${region.shipping.summary}`),
        ),
        HTML,
      );
    },
  };
}
