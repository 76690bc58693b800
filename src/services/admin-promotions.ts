// The merchant's promotions (issue #35, scope admin:promotions): the list with redemption counts, and expiring one now
// (under its Idempotency-Key, audited through runAdminChange). Promotions are a catalogue table (migration 007), so
// every instance's earlier reads and open sessions see an expiry.
import type { components } from '../../codegen/types.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { NotFound } from '../domain/errors.js';
import { runAdminChange, type AdminCall } from './admin-changes.js';

type AdminPromotion = components['schemas']['AdminPromotion'];

interface PromotionRow {
  code: string;
  kind: 'percentage' | 'fixed';
  value: number;
  currency_code: string | null;
  min_subtotal: number | null;
  starts_at: Date | null;
  ends_at: Date | null;
  usage_limit: number | null;
  times_redeemed: number;
}

const iso = (date: Date | null) => (date === null ? null : new Date(date).toISOString());

function view(row: PromotionRow): AdminPromotion {
  return {
    code: row.code,
    kind: row.kind,
    value: row.value,
    currency: row.currency_code,
    min_subtotal: row.min_subtotal,
    starts_at: iso(row.starts_at),
    ends_at: iso(row.ends_at),
    usage_limit: row.usage_limit,
    times_redeemed: row.times_redeemed,
  };
}

export async function listPromotions(deps: Deps) {
  const rows = (await deps.db('promotions').orderBy('code')) as PromotionRow[];
  return { object: 'list' as const, data: rows.map(view) };
}

async function lockPromotion(db: Db, code: string): Promise<PromotionRow | undefined> {
  return (await db('promotions').where({ code }).forUpdate().first()) as PromotionRow | undefined;
}

export async function expirePromotion(deps: Deps, rawCode: string, call: AdminCall<undefined>) {
  const code = rawCode.trim().toUpperCase();
  return runAdminChange(deps, call, 'expirePromotion', { type: 'promotion', id: code }, async (trx, at) => {
    const before = await lockPromotion(trx, code);
    if (!before) throw new NotFound(`No promotion with code ${rawCode}.`, { param: 'code' });
    const ended = before.ends_at !== null && new Date(before.ends_at).getTime() <= at.getTime();
    const [after] = ended
      ? [before]
      : ((await trx('promotions').where({ code }).update({ ends_at: at }).returning('*')) as PromotionRow[]);
    return {
      before: { ends_at: iso(before.ends_at) },
      after: { ends_at: iso(after!.ends_at) },
      render: async () => view(after!),
    };
  });
}
