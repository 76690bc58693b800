// This store's exact figures on its ACP binding (--store-specific; this project's own regression gate): its item and
// prices, totals, currencies, promo codes and reasons, headers, errors and rate limit. A foreign merchant is judged by
// the protocol checks instead (acp-*.ts).
import { randomUUID } from 'node:crypto';
import type { Json } from '../client.js';
import { acpTotalsProblems } from '../invariants.js';
import { skip } from './check.js';
import { ACP_VERSION, assert, SPEC, title, TWO_PACK, type StoreCheck, type StoreSession } from './store-session.js';

export function storeAcpChecks(session: StoreSession): StoreCheck[] {
  const { call, acpCreate, acpHeaders, totalsOf, BASIC, acpSessions } = session;
  return [
    {
      id: 'store.A-D1',
      protocol: 'acp',
      title: title('A-D1'),
      spec: SPEC,
      run: async () => {
        const { status, headers, body } = await call('/.well-known/acp.json');
        assert(status === 200 && body.protocol.version === ACP_VERSION, `${status}`);
        assert(headers.get('cache-control') === 'public, max-age=3600', 'Cache-Control');
        const discovery = await call('/.well-known/acp.json');
        assert(discovery.body.api_base_url.endsWith('/acp'), 'api_base_url');
      },
    },
    {
      id: 'store.A-H1',
      protocol: 'acp',
      title: title('A-H1'),
      spec: SPEC,
      run: async () => {
        const { status, headers } = await call('/acp/checkout_sessions', {
          method: 'POST',
          headers: { 'API-Version': ACP_VERSION, 'Idempotency-Key': randomUUID(), 'Content-Type': 'application/json' },
          body: JSON.stringify(BASIC),
        });
        assert(status === 401 && headers.get('www-authenticate'), `${status}`);
      },
    },
    {
      id: 'store.A-H2',
      protocol: 'acp',
      title: title('A-H2'),
      spec: SPEC,
      run: async () => {
        const { status, body } = await acpCreate(BASIC, { 'API-Version': '2026-01-30' });
        assert(
          status === 400 && body.code === 'unsupported_api_version' && body.supported_versions?.[0] === ACP_VERSION,
          `${status}`,
        );
      },
    },
    {
      id: 'store.A-H3',
      protocol: 'acp',
      title: title('A-H3'),
      spec: SPEC,
      run: async () => {
        const { status, body } = await acpCreate(BASIC, { 'Idempotency-Key': '' });
        assert(status === 400 && body.code === 'idempotency_key_required', `${status}`);
      },
    },
    {
      id: 'store.A-C1/A-C2',
      protocol: 'acp',
      title: title('A-C1/A-C2'),
      spec: SPEC,
      run: async () => {
        const first = await acpCreate({ ...BASIC, discounts: { codes: ['10OFF'] } });
        assert(first.status === 201 && first.body.status === 'requires_escalation', `${first.status}`);
        const expected = [
          ['items_base_amount', 2598],
          ['items_discount', 260],
          ['subtotal', 2338],
          ['fulfillment', 495],
          ['tax', 170],
          ['total', 3003],
        ];
        assert(
          JSON.stringify(totalsOf(first.body.totals)) === JSON.stringify(expected),
          `totals ${JSON.stringify(totalsOf(first.body.totals))}`,
        );
        const second = await acpCreate({
          line_items: [{ item: { id: TWO_PACK }, quantity: 2 }],
          currency: 'usd',
          capabilities: {},
          discounts: { codes: ['10OFF'] },
        });
        assert(
          JSON.stringify(totalsOf(second.body.totals)) === JSON.stringify(expected),
          'the item form prices differently',
        );
      },
    },
    {
      id: 'store.A-C4',
      protocol: 'acp',
      title: title('A-C4'),
      spec: SPEC,
      run: async () => {
        const chf = await acpCreate({ ...BASIC, currency: 'chf' });
        assert(
          chf.status === 400 && chf.body.code === 'unsupported_currency' && chf.body.param === '$.currency',
          `${chf.status}`,
        );
      },
    },
    {
      id: 'store.A-C5',
      protocol: 'acp',
      title: title('A-C5'),
      spec: SPEC,
      run: async () => {
        const { body } = await acpCreate({ ...BASIC, discounts: { codes: ['NOPE99'] } });
        assert(body.discounts.rejected[0]?.reason === 'discount_code_invalid', 'rejected');
      },
    },
    {
      id: 'store.A-C7/A-C8',
      protocol: 'acp',
      title: title('A-C7/A-C8'),
      spec: SPEC,
      run: async () => {
        const unknown = await acpCreate({ ...BASIC, line_items: [{ id: 'variant_nope', quantity: 1 }] });
        assert(unknown.status === 400 && unknown.body.code === 'item_not_found', `${unknown.status}`);
        const legacy = await acpCreate({ items: BASIC.line_items, currency: 'usd', capabilities: {} });
        assert(legacy.status === 400 && legacy.body.code === 'unknown_field', `${legacy.status} ${legacy.body.code}`);
      },
    },
    {
      id: 'store.A-G1/A-U1',
      protocol: 'acp',
      title: title('A-G1/A-U1'),
      spec: SPEC,
      run: async () => {
        const missing = await call('/acp/checkout_sessions/cart_nope', { headers: acpHeaders() });
        assert(missing.status === 404 && missing.body.code === 'session_not_found', `${missing.status}`);
        const created = await acpCreate(BASIC);
        const path = `/acp/checkout_sessions/${created.body.id}`;
        const updated = await call(path, {
          method: 'POST',
          headers: acpHeaders(),
          body: JSON.stringify({ line_items: [{ id: TWO_PACK, quantity: 3 }] }),
        });
        assert(
          updated.status === 200 &&
            updated.body.line_items[0].id === created.body.line_items[0].id &&
            updated.body.line_items[0].quantity === 3,
          'update',
        );
      },
    },
    {
      id: 'store.A-P1/A-X1',
      protocol: 'acp',
      title: title('A-P1/A-X1'),
      spec: SPEC,
      run: async () => {
        const created = await acpCreate(BASIC);
        const path = `/acp/checkout_sessions/${created.body.id}`;
        const complete = await call(`${path}/complete`, {
          method: 'POST',
          headers: acpHeaders(),
          body: JSON.stringify({ payment_data: { purchase_order_number: 'PO-1' } }),
        });
        assert(
          complete.status === 422 && complete.body.code === 'delegated_payment_not_supported',
          `${complete.status}`,
        );
        const canceled = await call(`${path}/cancel`, { method: 'POST', headers: acpHeaders(), body: '{}' });
        assert(canceled.status === 200 && canceled.body.status === 'canceled', `${canceled.status}`);
        const again = await call(`${path}/cancel`, { method: 'POST', headers: acpHeaders(), body: '{}' });
        assert(again.status === 405 && again.body.code === 'session_already_canceled', `${again.status}`);
      },
    },
    {
      id: 'store.A-I1/A-I2',
      protocol: 'acp',
      title: title('A-I1/A-I2'),
      spec: SPEC,
      run: async () => {
        const key = randomUUID();
        const first = await call('/acp/checkout_sessions', {
          method: 'POST',
          headers: acpHeaders({ 'Idempotency-Key': key }),
          body: '{"line_items":[{"id":"variant_01tongue2pack","quantity":2}],"currency":"usd","capabilities":{}}',
        });
        const replay = await call('/acp/checkout_sessions', {
          method: 'POST',
          headers: acpHeaders({ 'Idempotency-Key': key }),
          body: '{"capabilities":{},"currency":"usd","line_items":[{"quantity":2.0,"id":"variant_01tongue2pack"}]}',
        });
        assert(
          replay.text === first.text && replay.headers.get('idempotent-replayed') === 'true',
          'not a byte-identical replay',
        );
        const conflict = await acpCreate({ ...BASIC, currency: 'eur' }, { 'Idempotency-Key': key });
        assert(conflict.status === 422 && conflict.body.code === 'idempotency_conflict', `${conflict.status}`);
      },
    },
    {
      id: 'store.A-H4/A-R2',
      protocol: 'acp',
      title: title('A-H4/A-R2'),
      spec: SPEC,
      run: async () => {
        const created = await acpCreate(BASIC, {
          'Idempotency-Key': 'conformance-echo',
          'Request-Id': 'conformance-1',
        });
        const headers = created.headers;
        assert(
          headers.get('idempotency-key') === 'conformance-echo',
          `Idempotency-Key ${headers.get('idempotency-key')}`,
        );
        assert(headers.get('request-id') === 'conformance-1', `Request-Id ${headers.get('request-id')}`);
        assert(headers.get('api-version') === ACP_VERSION, `API-Version ${headers.get('api-version')}`);
        const path = `/acp/checkout_sessions/${created.body.id}`;
        const updated = await call(path, {
          method: 'POST',
          headers: acpHeaders(),
          body: JSON.stringify({ line_items: [{ id: TWO_PACK, quantity: 3 }] }),
        });
        const read = await call(path, { headers: acpHeaders() });
        assert(read.text === updated.text, 'GET after update is not the updated session');
        for (const answer of [created, updated, read]) {
          assert(
            answer.headers.get('cache-control') === 'no-store',
            `Cache-Control ${answer.headers.get('cache-control')}`,
          );
          assert((answer.headers.get('content-type') ?? '').startsWith('application/json'), 'Content-Type');
        }
      },
    },
    {
      id: 'store.A-C5 (D7)',
      protocol: 'acp',
      title: title('A-C5 (D7)'),
      spec: SPEC,
      run: async () => {
        const reasons = async (body: unknown) =>
          JSON.stringify(
            ((await acpCreate(body)).body.discounts.rejected as Json[]).map((rejected) => rejected.reason),
          );
        const all = await reasons({
          ...BASIC,
          discounts: { codes: ['NOPE99', 'spring20', 'LAUNCH50', 'NEWYEAR27', '10OFF', '10off', 'WELCOME5'] },
        });
        const expected = [
          'discount_code_invalid',
          'discount_code_expired',
          'discount_code_usage_limit_reached',
          'discount_code_invalid',
          'discount_code_already_applied',
          'discount_code_combination_disallowed',
        ];
        assert(all === JSON.stringify(expected), `reasons ${all}`);
        const small = await reasons({
          ...BASIC,
          line_items: [{ id: TWO_PACK, quantity: 1 }],
          discounts: { codes: ['WELCOME5'] },
        });
        assert(small === '["discount_code_minimum_not_met"]', `below the minimum: ${small}`);
        const yen = await reasons({ ...BASIC, currency: 'jpy', discounts: { codes: ['WELCOME5'] } });
        assert(yen === '["discount_code_user_ineligible"]', `other currency: ${yen}`);
      },
    },
    {
      id: 'store.A-C6',
      protocol: 'acp',
      title: title('A-C6'),
      spec: SPEC,
      run: async () => {
        const { body } = await acpCreate(BASIC);
        assert(
          URL.canParse(body.continue_url) && body.continue_url.includes(body.id),
          `continue_url ${body.continue_url}`,
        );
        const [first] = body.messages;
        assert(
          first?.type === 'info' && first.resolution === 'requires_buyer_input' && first.param === '$.continue_url',
          `first message ${JSON.stringify(first)}`,
        );
        assert(body.capabilities?.payment?.handlers?.[0]?.requires_delegate_payment === false, 'handler');
      },
    },
    {
      id: 'store.A-U2/A-U3',
      protocol: 'acp',
      title: title('A-U2/A-U3'),
      spec: SPEC,
      run: async () => {
        const created = await acpCreate(BASIC);
        const path = `/acp/checkout_sessions/${created.body.id}`;
        const update = (body: unknown) =>
          call(path, { method: 'POST', headers: acpHeaders(), body: JSON.stringify(body) });
        const unknown = await update({ line_items: [{ id: 'variant_nope', quantity: 1 }] });
        const express = await update({
          selected_fulfillment_options: [
            { type: 'shipping', option_id: 'express', item_ids: [created.body.line_items[0].id] },
          ],
        });
        for (const [answer, code, param] of [
          [unknown, 'not_found', '$.line_items[0].id'],
          [express, 'invalid', '$.selected_fulfillment_options[0]'],
        ] as const) {
          assert(answer.status === 200, `${code}: ${answer.status}`);
          assert(
            JSON.stringify(answer.body.totals) === JSON.stringify(created.body.totals),
            `${code}: the session changed`,
          );
          assert(
            answer.body.messages.some(
              (message: Json) =>
                message.type === 'error' &&
                message.code === code &&
                message.param === param &&
                message.resolution === 'recoverable',
            ),
            `no recoverable ${code} at ${param}`,
          );
        }
      },
    },
    {
      id: 'store.A-P2',
      protocol: 'acp',
      title: title('A-P2'),
      spec: SPEC,
      run: async () => {
        const created = await acpCreate(BASIC);
        const path = `/acp/checkout_sessions/${created.body.id}`;
        const without = await call(`${path}/complete`, { method: 'POST', headers: acpHeaders(), body: '{}' });
        assert(without.status === 400, `complete without payment_data: ${without.status}`);
        await call(`${path}/cancel`, { method: 'POST', headers: acpHeaders(), body: '{}' });
        const canceled = await call(`${path}/complete`, {
          method: 'POST',
          headers: acpHeaders(),
          body: JSON.stringify({ payment_data: { purchase_order_number: 'PO-1' } }),
        });
        assert(canceled.status === 405 && canceled.body.code === 'session_canceled', `on canceled: ${canceled.status}`);
      },
    },
    {
      id: 'store.A-I2 (in flight)/A-I3',
      protocol: 'acp',
      title: title('A-I2 (in flight)/A-I3'),
      spec: SPEC,
      run: async () => {
        const key = randomUUID();
        const body = JSON.stringify(BASIC);
        const answers = await Promise.all(
          Array.from({ length: 5 }, () =>
            call('/acp/checkout_sessions', { method: 'POST', headers: acpHeaders({ 'Idempotency-Key': key }), body }),
          ),
        );
        const created = answers.filter((answer) => answer.status === 201);
        const inFlight = answers.filter((answer) => answer.status === 409);
        assert(created.length + inFlight.length === answers.length, `statuses ${answers.map((a) => a.status)}`);
        assert(new Set(created.map((answer) => answer.body.id)).size === 1, 'more than one session created');
        assert(
          inFlight.every((answer) => answer.body.code === 'idempotency_in_flight' && answer.headers.get('retry-after')),
          'in flight without idempotency_in_flight + Retry-After',
        );
        const withNull = await acpCreate({ ...BASIC, buyer: null }, { 'Idempotency-Key': key });
        assert(
          withNull.status === 422 && withNull.body.code === 'idempotency_conflict',
          `null vs absent: ${withNull.status}`,
        );
      },
    },
    {
      id: 'store.A-C3',
      protocol: 'acp',
      title: title('A-C3'),
      spec: SPEC,
      run: async () => {
        assert(acpSessions.length > 0, 'no session received');
        const problems = acpSessions.flatMap((session) =>
          acpTotalsProblems(session).map((problem) => `${session.id}: ${problem}`),
        );
        assert(problems.length === 0, `${problems.length} broken: ${problems[0]}`);
      },
    },
    {
      id: 'store.A-R1',
      protocol: 'acp',
      title: title('A-R1'),
      spec: SPEC,
      run: async () => {
        const probe = await call('/.well-known/acp.json');
        const remaining = Number(probe.headers.get('ratelimit-remaining'));
        if (!probe.headers.has('ratelimit-remaining') || remaining > 5_000)
          skip(`a limit of ${probe.headers.get('ratelimit-limit') ?? 'unknown'} is too high to reach`);
        // Up to three windows' worth: a window that ends while a loaded machine sends still meets the next one's limit.
        const limit = Number(probe.headers.get('ratelimit-limit')) || remaining;
        let limited: Awaited<ReturnType<typeof call>> | undefined;
        for (let sent = 0; !limited && sent <= remaining + 2 * limit + 50; sent += 50) {
          const answers = await Promise.all(
            Array.from({ length: 50 }, () => call('/acp/checkout_sessions/cart_nope', { headers: acpHeaders() })),
          );
          limited = answers.find((answer) => answer.status === 429);
        }
        assert(limited, 'no 429');
        assert(
          limited.body.type === 'service_unavailable' && limited.body.code === 'rate_limit_exceeded',
          `429 body ${limited.text}`,
        );
        assert(Number(limited.headers.get('retry-after')) > 0, 'no Retry-After');
      },
    },
  ];
}
