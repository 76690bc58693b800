// This store's exact figures on its UCP binding (--store-specific; this project's own regression gate): its item and
// prices, totals, promo codes and reasons, Cache-Control values, MCP tool set and negotiation answers. A foreign
// merchant is judged by the protocol checks instead (ucp-*.ts).
import { randomUUID } from 'node:crypto';
import type { Json } from '../client.js';
import { ucpTotalsProblems } from '../invariants.js';
import { skip } from './check.js';
import { assert, bodyProblems, SPEC, title, TWO_PACK, type StoreCheck, type StoreSession } from './store-session.js';

export function storeUcpChecks(session: StoreSession): StoreCheck[] {
  const { call, ucpCreate, ucpHeaders, lines, totalsOf, profile, profileBase, lenient, onSchemaErrors, ucpCheckouts } =
    session;
  return [
    {
      id: 'store.U-D1',
      protocol: 'ucp',
      title: title('U-D1'),
      spec: SPEC,
      run: async () => {
        const { status, body } = await call('/.well-known/ucp');
        assert(status === 200, `status ${status}`);
        const services = body.ucp.services['dev.ucp.shopping']
          .map((service: Json) => service.transport)
          .sort()
          .join(',');
        assert(services === 'mcp,rest', `services ${services}`);
        // Checkout and discount, the fulfillment extension (issue #32), catalog, cart and order (issue #31).
        const capabilities = Object.keys(body.ucp.capabilities).sort().join(',');
        assert(
          capabilities ===
            'dev.ucp.shopping.cart,dev.ucp.shopping.catalog.lookup,dev.ucp.shopping.catalog.search,dev.ucp.shopping.checkout,dev.ucp.shopping.discount,dev.ucp.shopping.fulfillment,dev.ucp.shopping.order',
          `capabilities ${capabilities}`,
        );
      },
    },
    {
      id: 'store.U-D2',
      protocol: 'ucp',
      title: title('U-D2'),
      spec: SPEC,
      run: async () => {
        const first = await call('/.well-known/ucp');
        const second = await call('/.well-known/ucp', {
          headers: { 'UCP-Agent': 'profile="https://x.example/p";version="2099-01-01"' },
        });
        assert(first.text === second.text, 'body differs with UCP-Agent');
        assert(
          first.headers.get('cache-control') === 'public, max-age=300',
          `Cache-Control ${first.headers.get('cache-control')}`,
        );
      },
    },
    {
      id: 'store.U-N1',
      protocol: 'ucp',
      title: title('U-N1'),
      spec: SPEC,
      run: async () => {
        const { status, body } = await ucpCreate(lines(), ucpHeaders(undefined, { 'UCP-Agent': 'garbage;;' }));
        assert(status === 400 && body.code === 'invalid_profile_url', `${status} ${body?.code}`);
      },
    },
    {
      id: 'store.U-N2',
      protocol: 'ucp',
      title: title('U-N2'),
      spec: SPEC,
      run: async () => {
        if (lenient || !profileBase) skip('lenient policy or external profile');
        const missing = await ucpCreate(lines(), ucpHeaders(`${profileBase}/missing.json`));
        assert(missing.status === 424 && missing.body.code === 'profile_unreachable', `missing: ${missing.status}`);
        const old = await ucpCreate(lines(), ucpHeaders(`${profileBase}/old.json`));
        assert(old.status === 422 && old.body.code === 'version_unsupported', `old: ${old.status}`);
      },
    },
    {
      id: 'store.U-N3',
      protocol: 'ucp',
      title: title('U-N3'),
      spec: SPEC,
      run: async () => {
        if (lenient || !profileBase) skip('lenient policy or external profile');
        const { status, body } = await ucpCreate(lines(), ucpHeaders(`${profileBase}/no-checkout.json`));
        assert(status === 200 && body.messages[0].code === 'capabilities_incompatible', `${status}`);
      },
    },
    {
      id: 'store.U-N4',
      protocol: 'ucp',
      title: title('U-N4'),
      spec: SPEC,
      run: async () => {
        if (lenient || !profileBase) skip('lenient policy or external profile');
        const { status, body } = await ucpCreate(
          { ...lines(), discounts: { codes: ['10OFF'] } },
          ucpHeaders(`${profileBase}/no-discount.json`),
        );
        assert(status === 201 && body.discounts === undefined, `${status}`);
        assert(
          body.messages.some((message: Json) => message.code === 'discount_not_negotiated'),
          'no discount_not_negotiated warning',
        );
      },
    },
    {
      id: 'store.U-H1',
      protocol: 'ucp',
      title: title('U-H1'),
      spec: SPEC,
      run: async () => {
        const headers: Record<string, string> = ucpHeaders();
        delete headers['Idempotency-Key'];
        const noKey = await ucpCreate(lines(), headers);
        assert(noKey.status === 400 && noKey.body.code === 'idempotency_key_required', `${noKey.status}`);
        const badId = await ucpCreate(lines(), ucpHeaders(undefined, { 'Request-Id': 'nope' }));
        assert(badId.status === 400 && badId.body.code === 'invalid_request_id', `${badId.status}`);
      },
    },
    {
      id: 'store.U-C1',
      protocol: 'ucp',
      title: title('U-C1'),
      spec: SPEC,
      run: async () => {
        const { status, body } = await ucpCreate({ ...lines(), discounts: { codes: ['10OFF'] } });
        assert(
          status === 201 && body.status === 'requires_escalation' && body.currency === 'USD',
          `${status} ${body.status}`,
        );
        assert(
          JSON.stringify(totalsOf(body.totals)) ===
            JSON.stringify([
              ['subtotal', 2598],
              ['items_discount', -260],
              ['fulfillment', 495],
              ['tax', 170],
              ['total', 3003],
            ]),
          `totals ${JSON.stringify(totalsOf(body.totals))}`,
        );
      },
    },
    {
      id: 'store.U-C3',
      protocol: 'ucp',
      title: title('U-C3'),
      spec: SPEC,
      run: async () => {
        const { body } = await ucpCreate({
          line_items: [{ item: { id: TWO_PACK }, quantity: 1 }],
          context: { address_country: 'JP' },
          discounts: { codes: ['10OFF'] },
        });
        assert(
          JSON.stringify(totalsOf(body.totals)) ===
            JSON.stringify([
              ['subtotal', 1900],
              ['items_discount', -190],
              ['fulfillment', 600],
              ['tax', 171],
              ['total', 2481],
            ]),
          `JPY totals ${JSON.stringify(totalsOf(body.totals))}`,
        );
      },
    },
    {
      id: 'store.U-C4',
      protocol: 'ucp',
      title: title('U-C4'),
      spec: SPEC,
      run: async () => {
        const { body } = await ucpCreate({ ...lines(), discounts: { codes: ['NOPE99'] } });
        assert(
          body.messages.some(
            (message: Json) => message.code === 'discount_code_invalid' && message.path === '$.discounts.codes[0]',
          ),
          'no discount_code_invalid warning',
        );
      },
    },
    {
      id: 'store.U-C7',
      protocol: 'ucp',
      title: title('U-C7'),
      spec: SPEC,
      run: async () => {
        const { status, body } = await ucpCreate({ line_items: [{ item: { id: 'variant_nope' }, quantity: 1 }] });
        assert(status === 200 && body.ucp.status === 'error' && body.messages[0].code === 'not_found', `${status}`);
      },
    },
    {
      id: 'store.U-C8',
      protocol: 'ucp',
      title: title('U-C8'),
      spec: SPEC,
      run: async () => {
        const { status, body } = await ucpCreate({ line_items: [{ item: { id: TWO_PACK }, quantity: 0 }] });
        assert(status === 400 && body.code === 'invalid_request', `${status}`);
      },
    },
    {
      id: 'store.U-G1',
      protocol: 'ucp',
      title: title('U-G1'),
      spec: SPEC,
      run: async () => {
        const created = await ucpCreate(lines());
        const read = await call(`/ucp/checkout-sessions/${created.body.id}`, { headers: ucpHeaders() });
        assert(read.text === created.text, 'GET differs from create');
        const unknown = await call('/ucp/checkout-sessions/cart_nope', { headers: ucpHeaders() });
        assert(unknown.status === 200 && unknown.body.messages[0].code === 'not_found', `${unknown.status}`);
      },
    },
    {
      id: 'store.U-U1',
      protocol: 'ucp',
      title: title('U-U1'),
      spec: SPEC,
      run: async () => {
        const created = await ucpCreate(lines(1));
        const updated = await call(`/ucp/checkout-sessions/${created.body.id}`, {
          method: 'PUT',
          headers: ucpHeaders(),
          body: JSON.stringify(lines(3)),
        });
        assert(
          updated.status === 200 &&
            updated.body.line_items[0].id === created.body.line_items[0].id &&
            updated.body.line_items[0].quantity === 3,
          'line not kept',
        );
      },
    },
    {
      id: 'store.U-P1/U-X1/U-U3',
      protocol: 'ucp',
      title: title('U-P1/U-X1/U-U3'),
      spec: SPEC,
      run: async () => {
        const created = await ucpCreate(lines(1));
        const path = `/ucp/checkout-sessions/${created.body.id}`;
        const completed = await call(`${path}/complete`, {
          method: 'POST',
          headers: ucpHeaders(),
          body: JSON.stringify({ payment: {} }),
        });
        assert(
          completed.status === 200 && completed.body.status === 'requires_escalation' && !completed.body.order,
          'complete',
        );
        const canceled = await call(`${path}/cancel`, { method: 'POST', headers: ucpHeaders() });
        assert(canceled.status === 200 && canceled.body.status === 'canceled' && !canceled.body.continue_url, 'cancel');
        const again = await call(`${path}/cancel`, { method: 'POST', headers: ucpHeaders() });
        assert(again.status === 409 && again.body.code === 'checkout_not_modifiable', `second cancel ${again.status}`);
      },
    },
    {
      id: 'store.U-I1',
      protocol: 'ucp',
      title: title('U-I1'),
      spec: SPEC,
      run: async () => {
        const headers = ucpHeaders();
        const first = await call('/ucp/checkout-sessions', {
          method: 'POST',
          headers,
          body: '{"line_items":[{"item":{"id":"variant_01tongue2pack"},"quantity":2}]}',
        });
        const replay = await call('/ucp/checkout-sessions', {
          method: 'POST',
          headers: { ...headers, 'Request-Id': randomUUID() },
          body: '{"line_items":[{"quantity":2.0,"item":{"id":"variant_01tongue2pack"}}]}',
        });
        assert(
          replay.text === first.text && replay.headers.get('idempotent-replayed') === 'true',
          'not a byte-identical replay',
        );
        const conflict = await call('/ucp/checkout-sessions', {
          method: 'POST',
          headers: { ...headers, 'Request-Id': randomUUID() },
          body: JSON.stringify(lines(3)),
        });
        assert(conflict.status === 409 && conflict.body.code === 'idempotency_conflict', `${conflict.status}`);
      },
    },
    {
      id: 'store.U-M1/U-M2',
      protocol: 'ucp',
      title: title('U-M1/U-M2'),
      spec: SPEC,
      run: async () => {
        const rpc = (method: string, params?: unknown) =>
          call('/ucp/mcp', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
            body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
          });
        const list = await rpc('tools/list');
        // The checkout's five, then the catalog's three, the cart's four and the order's one.
        assert(list.body.result.tools.length === 13, 'thirteen tools');
        const created = await rpc('tools/call', {
          name: 'create_checkout',
          arguments: { meta: { 'ucp-agent': { profile } }, checkout: lines() },
        });
        const content = created.body.result.structuredContent;
        const problems = bodyProblems(session.schemaSets, '/ucp/checkout-sessions', 201, content);
        onSchemaErrors(problems.length);
        assert(problems.length === 0, `structuredContent: ${problems[0]?.message}`);
        const rest = await call(`/ucp/checkout-sessions/${content.id}`, { headers: ucpHeaders() });
        assert(JSON.stringify(rest.body) === JSON.stringify(content), 'MCP and REST differ');
      },
    },
    {
      id: 'store.U-N5',
      protocol: 'ucp',
      title: title('U-N5'),
      spec: SPEC,
      run: async () => {
        if (!lenient || !profileBase) skip('the store is not in the lenient policy');
        const { status, body } = await ucpCreate(lines(), ucpHeaders(`${profileBase}/missing.json`));
        assert(status === 201, `${status}`);
        assert(
          body.messages.some((message: Json) => message.type === 'info' && message.code === 'profile_not_negotiated'),
          'no profile_not_negotiated info',
        );
      },
    },
    {
      id: 'store.U-C5',
      protocol: 'ucp',
      title: title('U-C5'),
      spec: SPEC,
      run: async () => {
        const codes = ['NOPE99', 'spring20', 'LAUNCH50', 'NEWYEAR27', '10OFF', '10off', 'WELCOME5'];
        const warnings = (checkout: Json) =>
          JSON.stringify(
            checkout.messages
              .filter((message: Json) => message.type === 'warning')
              .map((message: Json) => [message.path, message.code]),
          );
        const all = await ucpCreate({ ...lines(), discounts: { codes } });
        const expected = [
          ['$.discounts.codes[0]', 'discount_code_invalid'],
          ['$.discounts.codes[1]', 'discount_code_expired'],
          ['$.discounts.codes[2]', 'discount_code_usage_limit_reached'],
          ['$.discounts.codes[3]', 'discount_code_invalid'],
          ['$.discounts.codes[5]', 'discount_code_already_applied'],
          ['$.discounts.codes[6]', 'discount_code_combination_disallowed'],
        ];
        assert(warnings(all.body) === JSON.stringify(expected), `warnings ${warnings(all.body)}`);
        const small = await ucpCreate({ ...lines(1), discounts: { codes: ['WELCOME5'] } });
        assert(
          warnings(small.body) === JSON.stringify([['$.discounts.codes[0]', 'discount_code_minimum_not_met']]),
          `below the minimum: ${warnings(small.body)}`,
        );
        const yen = await ucpCreate({
          ...lines(),
          context: { address_country: 'JP' },
          discounts: { codes: ['WELCOME5'] },
        });
        assert(
          warnings(yen.body) === JSON.stringify([['$.discounts.codes[0]', 'discount_code_user_ineligible']]),
          `other currency: ${warnings(yen.body)}`,
        );
      },
    },
    {
      id: 'store.U-C6',
      protocol: 'ucp',
      title: title('U-C6'),
      spec: SPEC,
      run: async () => {
        const { body } = await ucpCreate(lines());
        assert(body.status === 'requires_escalation', `status ${body.status}`);
        assert(
          URL.canParse(body.continue_url) && body.continue_url.includes(body.id),
          `continue_url ${body.continue_url}`,
        );
        const [first] = body.messages;
        assert(
          first?.type === 'error' &&
            first.code === 'payment_handoff_required' &&
            first.severity === 'requires_buyer_input',
          `first message ${JSON.stringify(first)}`,
        );
      },
    },
    {
      id: 'store.U-C9',
      protocol: 'ucp',
      title: title('U-C9'),
      spec: SPEC,
      run: async () => {
        const { status, body } = await ucpCreate({
          id: 'chk_mine',
          status: 'completed',
          currency: 'EUR',
          ucp: { version: '2020-01-01' },
          totals: [{ type: 'total', amount: 1 }],
          line_items: [{ id: 'li_mine', item: { id: TWO_PACK, price: 1 }, quantity: 2, totals: [] }],
        });
        assert(
          status === 201 && body.id !== 'chk_mine' && body.currency === 'USD',
          `${status} ${body.id} ${body.currency}`,
        );
        assert(body.line_items[0].item.price === 1299, `price ${body.line_items[0].item.price}`);
      },
    },
    {
      id: 'store.U-U2/U-U3',
      protocol: 'ucp',
      title: title('U-U2/U-U3'),
      spec: SPEC,
      run: async () => {
        const created = await ucpCreate(lines());
        const path = `/ucp/checkout-sessions/${created.body.id}`;
        const rejected = await call(path, {
          method: 'PUT',
          headers: ucpHeaders(),
          body: JSON.stringify({ line_items: [{ item: { id: 'variant_nope' }, quantity: 1 }] }),
        });
        assert(rejected.status === 200, `${rejected.status}`);
        assert(
          JSON.stringify(rejected.body.line_items) === JSON.stringify(created.body.line_items) &&
            JSON.stringify(rejected.body.totals) === JSON.stringify(created.body.totals),
          'the checkout changed',
        );
        assert(
          rejected.body.messages.some(
            (message: Json) =>
              message.code === 'not_found' &&
              message.severity === 'recoverable' &&
              message.path === '$.line_items[0].item.id',
          ),
          'no recoverable not_found',
        );
        await call(`${path}/cancel`, { method: 'POST', headers: ucpHeaders() });
        const put = await call(path, { method: 'PUT', headers: ucpHeaders(), body: JSON.stringify(lines()) });
        const complete = await call(`${path}/complete`, {
          method: 'POST',
          headers: ucpHeaders(),
          body: JSON.stringify({ payment: {} }),
        });
        for (const [what, answer] of [
          ['PUT', put],
          ['complete', complete],
        ] as const)
          assert(answer.status === 409 && answer.body.code === 'checkout_not_modifiable', `${what} ${answer.status}`);
      },
    },
    {
      id: 'store.U-I2',
      protocol: 'ucp',
      title: title('U-I2'),
      spec: SPEC,
      run: async () => {
        const headers = ucpHeaders();
        const body = JSON.stringify(lines());
        const answers = await Promise.all(
          Array.from({ length: 5 }, () =>
            call('/ucp/checkout-sessions', {
              method: 'POST',
              headers: { ...headers, 'Request-Id': randomUUID() },
              body,
            }),
          ),
        );
        const created = answers.filter((answer) => answer.status === 201);
        const inFlight = answers.filter((answer) => answer.status === 503);
        assert(created.length + inFlight.length === answers.length, `statuses ${answers.map((a) => a.status)}`);
        assert(new Set(created.map((answer) => answer.body.id)).size === 1, 'more than one checkout created');
        assert(
          inFlight.every((answer) => answer.body.code === 'idempotency_in_flight' && answer.headers.get('retry-after')),
          'in flight without idempotency_in_flight + Retry-After',
        );
        const retry = await call('/ucp/checkout-sessions', {
          method: 'POST',
          headers: { ...headers, 'Request-Id': randomUUID() },
          body,
        });
        assert(retry.status === 201 && retry.body.id === created[0]!.body.id, 'the retry is not the same checkout');
      },
    },
    {
      id: 'store.U-M3',
      protocol: 'ucp',
      title: title('U-M3'),
      spec: SPEC,
      run: async () => {
        if (!profileBase) skip('external profile');
        const rpc = (id: number, name: string, args: unknown) =>
          call('/ucp/mcp', {
            method: 'POST',
            headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
            body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
          });
        const unreachable = await rpc(1, 'create_checkout', {
          meta: { 'ucp-agent': { profile: `${profileBase}/missing.json` } },
          checkout: lines(),
        });
        if (!lenient)
          assert(
            unreachable.status === 424 && unreachable.body.error?.code === -32001,
            `negotiation: ${unreachable.status} ${unreachable.body.error?.code}`,
          );
        const key = randomUUID();
        const meta = { 'ucp-agent': { profile }, 'idempotency-key': key };
        const first = await rpc(2, 'create_checkout', { meta, checkout: lines() });
        const again = await rpc(3, 'create_checkout', { meta, checkout: lines() });
        assert(
          JSON.stringify(again.body.result?.structuredContent) === JSON.stringify(first.body.result?.structuredContent),
          'another JSON-RPC id did not replay',
        );
        const conflict = await rpc(4, 'create_checkout', { meta, checkout: lines(3) });
        assert(
          conflict.status === 409 && conflict.body.error?.code === -32000,
          `conflict: ${conflict.status} ${conflict.body.error?.code}`,
        );
      },
    },
    {
      id: 'store.U-R1',
      protocol: 'ucp',
      title: title('U-R1'),
      spec: SPEC,
      run: async () => {
        const { headers } = await ucpCreate(lines());
        assert(
          headers.get('cache-control') === 'no-store' &&
            (headers.get('content-type') ?? '').startsWith('application/json'),
          'headers',
        );
      },
    },
    {
      id: 'store.U-C2',
      protocol: 'ucp',
      title: title('U-C2'),
      spec: SPEC,
      run: async () => {
        assert(ucpCheckouts.length > 0, 'no checkout received');
        const problems = ucpCheckouts.flatMap((checkout) =>
          ucpTotalsProblems(checkout).map((problem) => `${checkout.id}: ${problem}`),
        );
        assert(problems.length === 0, `${problems.length} broken: ${problems[0]}`);
      },
    },
  ];
}
