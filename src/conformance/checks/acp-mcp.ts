// ACP over MCP (openrpc.agentic_checkout.json): the five tools are listed, and a session created over MCP (meta's
// api_version and idempotency_key, the REST body as `payload`) is a valid CheckoutSession that REST reads the same.
// Run when the discovery document lists the `mcp` transport; the endpoint is `{api_base_url}/mcp`, bearer-authenticated
// like REST.
import type { Json } from '../client.js';
import { randomUUID } from 'node:crypto';
import { CheckFailure, expectThat, type Check } from './check.js';
import { acpCall, acpCreateBody, acpToken, type AcpContext } from './acp-context.js';
import type { McpSession } from './ucp-transport.js';

export const ACP_MCP_TOOLS = [
  'create_checkout_session',
  'get_checkout_session',
  'update_checkout_session',
  'complete_checkout_session',
  'cancel_checkout_session',
];

const acpMcpSpec = (section: string) =>
  `ACP {version}, openrpc.agentic_checkout.json › ${section} (https://github.com/agentic-commerce-protocol/agentic-commerce-protocol/tree/main/spec/{version})`;

export interface AcpMcpContext extends AcpContext {
  session: McpSession;
}

export const acpMcpChecks: Check<AcpMcpContext>[] = [
  {
    id: 'acp.mcp.tools',
    title: 'tools/list lists the five checkout session tools',
    spec: acpMcpSpec('methods'),
    async run(context) {
      acpToken(context);
      const { answer, message } = await context.session.rpc('tools/list', {});
      const tools: Json[] = message?.result?.tools ?? [];
      expectThat(answer.status === 200 && Array.isArray(message?.result?.tools), '200 with result.tools', answer);
      const names = new Set(tools.map((tool) => tool.name));
      const missing = ACP_MCP_TOOLS.filter((name) => !names.has(name));
      expectThat(missing.length === 0, `tools ${ACP_MCP_TOOLS.join(', ')}`, answer, `missing ${missing.join(', ')}`);
    },
  },
  {
    id: 'acp.mcp.same-as-rest',
    title: 'create_checkout_session answers a valid CheckoutSession that REST reads with the same totals',
    spec: acpMcpSpec('create_checkout_session (payload matches the REST request body exactly)'),
    async run(context) {
      acpToken(context);
      const { answer, message } = await context.session.rpc('tools/call', {
        name: 'create_checkout_session',
        arguments: {
          meta: { api_version: context.version, idempotency_key: randomUUID() },
          payload: acpCreateBody(context),
        },
      });
      const result = message?.result;
      const text = result?.content?.[0]?.text;
      const session: Json = result?.structuredContent ?? (typeof text === 'string' ? JSON.parse(text) : undefined);
      expectThat(
        answer.status === 200 && result && !result.isError && typeof session?.id === 'string',
        'a tools/call result with a checkout session',
        answer,
      );
      const problems = context.schemas.problems('CheckoutSession', session);
      if (problems.length) {
        context.onSchemaErrors(problems.length);
        throw new CheckFailure(
          `expected a create_checkout_session result valid against ACP ${context.version} CheckoutSession; ${problems.length} schema errors, first: ${problems[0]!.path} ${problems[0]!.message}`,
        );
      }
      context.sessions.push(session);
      const read = await acpCall(context, 'GET', `/checkout_sessions/${session.id}`);
      expectThat(
        read.status === 200 && JSON.stringify(read.body?.totals) === JSON.stringify(session.totals),
        `200 with session ${session.id} and the same totals`,
        read,
      );
    },
  },
];
