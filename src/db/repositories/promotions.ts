import type { Promotion } from '../../domain/promotions.js';
import { asPrepared, type Db } from '../knex.js';

export interface PromotionRow {
  code: string;
  kind: 'percentage' | 'fixed';
  value: number;
  currency_code: string | null;
  min_subtotal: number | null;
  starts_at: Date | string | null;
  ends_at: Date | string | null;
  usage_limit: number | null;
  times_redeemed: number;
}

/** The promotions among `codes` (canonical form), as one array parameter so the text never changes. */
function promotionsByCode(db: Db, codes: string[]) {
  return db('promotions').whereRaw('code = any(?::text[])', [codes]);
}

/** Rows as the domain sees them, keyed by code; dates may come as Date (a plain row) or as text (from JSON). */
export function promotionsOf(rows: PromotionRow[]): Map<string, Promotion> {
  return new Map(
    rows.map((row) => [
      row.code,
      {
        code: row.code,
        kind: row.kind,
        value: row.value,
        currencyCode: row.currency_code,
        minSubtotal: row.min_subtotal,
        startsAt: row.starts_at ? new Date(row.starts_at) : null,
        endsAt: row.ends_at ? new Date(row.ends_at) : null,
        usageLimit: row.usage_limit,
        timesRedeemed: row.times_redeemed,
      },
    ]),
  );
}

/** The stored promotions among `codes` (canonical form), keyed by code, in one prepared statement. */
export async function findPromotions(db: Db, codes: string[]): Promise<Map<string, Promotion>> {
  if (codes.length === 0) return new Map();
  return promotionsOf((await asPrepared('promotions_by_code', promotionsByCode(db, codes))) as PromotionRow[]);
}
