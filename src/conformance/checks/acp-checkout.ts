// ACP checkout (openapi.agentic_checkout.yaml): authentication, API-Version, Idempotency-Key, create/get/update/
// complete/cancel with the statuses the specification fixes, idempotent replay and conflict, business outcomes as 200
// with messages, and totals that add up.
import { randomUUID } from 'node:crypto';
import type { Answer, Json } from '../client.js';
import { acpTotalsProblems } from '../invariants.js';
import { expectThat, type Check } from './check.js';
import { acpCall, acpCreateBody, acpLines, acpSpec, acpToken, type AcpContext } from './acp-context.js';

const path = (id: string) => `/checkout_sessions/${encodeURIComponent(id)}`;

/** Creates a session of the fixture's items and expects 201. */
export async function createSession(context: AcpContext, extra: Json = {}): Promise<Answer> {
  acpToken(context);
  const created = await acpCall(context, 'POST', '/checkout_sessions', acpCreateBody(context, extra));
  expectThat(created.status === 201 && typeof created.body?.id === 'string', '201 with a checkout session', created);
  return created;
}

const quantities = (session: Json) =>
  JSON.stringify((session.line_items ?? []).map((line: Json) => [line.item?.id ?? line.id, line.quantity]));

export const acpCheckoutChecks: Check<AcpContext>[] = [
  {
    id: 'acp.auth.required',
    title: 'a create without Authorization is refused with 401 and WWW-Authenticate',
    spec: acpSpec('securitySchemes (bearer) and RFC 6750 §3'),
    async run(context) {
      const answer = await acpCall(
        context,
        'POST',
        '/checkout_sessions',
        { line_items: [{ id: 'x', quantity: 1 }] },
        {
          headers: { Authorization: null },
        },
      );
      expectThat(answer.status === 401 && answer.headers.has('www-authenticate'), '401 with WWW-Authenticate', answer);
    },
  },
  {
    id: 'acp.headers.api-version',
    title: 'an API-Version the merchant does not support is refused with 400',
    spec: acpSpec('parameters.APIVersion (required)'),
    async run(context) {
      acpToken(context);
      const answer = await acpCall(context, 'POST', '/checkout_sessions', acpCreateBody(context), {
        headers: { 'API-Version': '1999-01-01' },
      });
      expectThat(answer.status === 400, '400 (unsupported API-Version 1999-01-01)', answer);
    },
  },
  {
    id: 'acp.headers.idempotency-key-required',
    title: 'a create without Idempotency-Key is refused with 400 idempotency_key_required',
    spec: acpSpec('responses.IdempotencyKeyRequired'),
    async run(context) {
      acpToken(context);
      const answer = await acpCall(context, 'POST', '/checkout_sessions', acpCreateBody(context), {
        headers: { 'Idempotency-Key': null },
      });
      expectThat(
        answer.status === 400 && answer.body?.code === 'idempotency_key_required',
        '400 idempotency_key_required',
        answer,
      );
    },
  },
  {
    id: 'acp.checkout.create',
    title: 'create answers 201 with the session of the requested lines',
    spec: acpSpec('POST /checkout_sessions (MUST return 201)'),
    async run(context) {
      const created = await createSession(context);
      const wanted = JSON.stringify(acpLines(context).map((line) => [line.id, line.quantity]));
      expectThat(quantities(created.body) === wanted, `line items ${wanted}`, created);
      const type = created.headers.get('content-type') ?? '';
      expectThat(type.startsWith('application/json'), 'Content-Type application/json', created, `Content-Type ${type}`);
    },
  },
  {
    id: 'acp.checkout.get',
    title: 'get answers the session as created; an unknown id is a 404',
    spec: acpSpec('GET /checkout_sessions/{checkout_session_id}'),
    async run(context) {
      const created = await createSession(context);
      const read = await acpCall(context, 'GET', path(created.body.id));
      expectThat(
        read.status === 200 && read.body?.id === created.body.id && quantities(read.body) === quantities(created.body),
        `200 with session ${created.body.id} as created`,
        read,
      );
      const unknown = await acpCall(context, 'GET', path(`cs_conformance_${randomUUID()}`));
      expectThat(unknown.status === 404, '404 for an unknown session', unknown);
    },
  },
  {
    id: 'acp.checkout.update',
    title: 'update changes the quantities and answers 200',
    spec: acpSpec('POST /checkout_sessions/{checkout_session_id}'),
    async run(context) {
      const created = await createSession(context);
      const lines = acpLines(context, 1);
      const updated = await acpCall(context, 'POST', path(created.body.id), { line_items: lines });
      const wanted = JSON.stringify(lines.map((line) => [line.id, line.quantity]));
      expectThat(
        updated.status === 200 && quantities(updated.body) === wanted,
        `200 with line items ${wanted}`,
        updated,
      );
    },
  },
  {
    id: 'acp.checkout.unknown-item',
    title: 'an update to an item the merchant does not sell is a business outcome: 200 with an error message',
    spec: acpSpec('CheckoutSession.messages (MessageError)'),
    async run(context) {
      const created = await createSession(context);
      const answer = await acpCall(context, 'POST', path(created.body.id), {
        line_items: [{ id: 'conformance-no-such-item-7f3a9c', quantity: 1 }],
      });
      expectThat(
        answer.status === 200 && (answer.body?.messages ?? []).some((message: Json) => message.type === 'error'),
        '200 with messages[] holding an error',
        answer,
      );
    },
  },
  {
    id: 'acp.checkout.idempotency',
    title: 'the same Idempotency-Key and body replays the session (Idempotent-Replayed: true); another body is 422',
    spec: acpSpec('responses.IdempotencyConflict, headers Idempotent-Replayed'),
    async run(context) {
      acpToken(context);
      const key = randomUUID();
      const body = acpCreateBody(context);
      const first = await acpCall(context, 'POST', '/checkout_sessions', body, { headers: { 'Idempotency-Key': key } });
      expectThat(first.status === 201, '201', first);
      const replay = await acpCall(context, 'POST', '/checkout_sessions', body, {
        headers: { 'Idempotency-Key': key },
      });
      expectThat(
        replay.status === 201 &&
          replay.body?.id === first.body.id &&
          replay.headers.get('idempotent-replayed') === 'true',
        `201 replaying session ${first.body.id} with Idempotent-Replayed: true`,
        replay,
        `Idempotent-Replayed: ${replay.headers.get('idempotent-replayed')}`,
      );
      const conflict = await acpCall(
        context,
        'POST',
        '/checkout_sessions',
        { ...body, line_items: acpLines(context, 1) },
        { headers: { 'Idempotency-Key': key } },
      );
      expectThat(
        conflict.status === 422 && conflict.body?.code === 'idempotency_conflict',
        '422 idempotency_conflict',
        conflict,
      );
    },
  },
  {
    id: 'acp.checkout.complete-without-payment',
    title: 'complete without payment_data does not complete the session',
    spec: acpSpec('POST /checkout_sessions/{checkout_session_id}/complete'),
    async run(context) {
      const created = await createSession(context);
      const answer = await acpCall(context, 'POST', `${path(created.body.id)}/complete`, {});
      expectThat(
        (answer.status >= 400 && answer.status < 500) || (answer.status === 200 && answer.body?.status !== 'completed'),
        'a 4xx, or 200 with a session not completed',
        answer,
      );
    },
  },
  {
    id: 'acp.checkout.cancel',
    title: 'cancel answers 200 canceled; canceling again is a 405',
    spec: acpSpec('POST /checkout_sessions/{checkout_session_id}/cancel'),
    async run(context) {
      const created = await createSession(context);
      const canceled = await acpCall(context, 'POST', `${path(created.body.id)}/cancel`, {});
      expectThat(canceled.status === 200 && canceled.body?.status === 'canceled', '200 with status canceled', canceled);
      const again = await acpCall(context, 'POST', `${path(created.body.id)}/cancel`, {});
      expectThat(again.status === 405, '405 (not cancelable: already canceled)', again);
    },
  },
  {
    id: 'acp.checkout.totals',
    title: 'every session received has integer amounts that add up',
    spec: acpSpec('Total (items_base_amount − items_discount = subtotal; subtotal + fulfillment + tax = total)'),
    async run(context) {
      if (!context.sessions.length) await createSession(context);
      const problems = context.sessions.flatMap((session) =>
        acpTotalsProblems(session).map((problem) => `${session.id}: ${problem}`),
      );
      expectThat(
        problems.length === 0,
        `totals that add up in all ${context.sessions.length} sessions`,
        undefined,
        `${problems.length} broken, first: ${problems[0]}`,
      );
    },
  },
];
