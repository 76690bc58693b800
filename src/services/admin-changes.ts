// One admin change, whatever it changes: under its Idempotency-Key (claim-first, adminKeys), in one transaction that
// writes the change, its audit event (client, time, operation, before and after) and the answer under the key. A
// refusal throws before anything commits, so it records nothing and leaves its key free.
import { insertAudit } from '../db/repositories/admin-orders.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { Conflict, Unprocessable } from '../domain/errors.js';
import type { ProtocolResponse } from '../protocols/answers.js';
import { adminKeys, claimFirst, type KeyOutcome } from './idempotency/index.js';

/** Who asks for an admin change, under which key, with what body (as the contract validated it). */
export interface AdminCall<Body> {
  clientId: string;
  idempotencyKey: string;
  body: Body;
}

/** What a change did: the values before and after for the audit trail, and its answer, rendered after its audit. */
export interface ChangeDone<Answer> {
  before: Record<string, unknown>;
  after: Record<string, unknown>;
  render(trx: Db): Promise<Answer>;
}

export async function runAdminChange<Answer>(
  deps: Deps,
  call: AdminCall<unknown>,
  operation: string,
  target: { type: string; id: string },
  change: (trx: Db, at: Date) => Promise<ChangeDone<Answer>>,
): Promise<{ answer: Answer; replayed: boolean }> {
  const outcome: KeyOutcome<ProtocolResponse> = await claimFirst(
    deps,
    adminKeys,
    {
      scope: adminKeys.scope(call.clientId, operation, `${target.type}:${target.id}`),
      key: call.idempotencyKey,
      body: call.body ?? {},
    },
    async (trx) => {
      const at = new Date(deps.now());
      const done = await change(trx, at);
      await insertAudit(trx, {
        id: deps.ids.next('audit'),
        client_id: call.clientId,
        operation,
        target_type: target.type,
        target_id: target.id,
        before: done.before,
        after: done.after,
        created_at: at,
      });
      return { status: 200, body: JSON.stringify(await done.render(trx)), headers: {} };
    },
  );
  switch (outcome.kind) {
    case 'ran':
    case 'replayed':
      return { answer: JSON.parse(outcome.answer.body) as Answer, replayed: outcome.kind === 'replayed' };
    case 'conflict':
      throw new Unprocessable(
        'idempotency_conflict',
        'This Idempotency-Key was used with another request; use a new key for a new request.',
        { param: 'Idempotency-Key' },
      );
    case 'in_flight':
      throw new Conflict('idempotency_in_flight', 'A request with this Idempotency-Key is still in flight.', 1, {
        param: 'Idempotency-Key',
      });
  }
}
