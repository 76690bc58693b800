// The merchant's promotions (issue #35, scope admin:promotions): the list with redemption counts, creating one and
// expiring one now (each under its Idempotency-Key, audited through runAdminChange). Promotions are a catalogue table (migration 007), so
// every instance's earlier reads and open sessions see an expiry.
import type { components } from '../../codegen/types.js';
import type { Db } from '../db/knex.js';
import type { Deps } from '../deps.js';
import { BadRequest, Conflict, NotFound } from '../domain/errors.js';
import { canonicalCode } from '../domain/promotions.js';
import { runAdminChange, type AdminCall } from './admin-changes.js';

type AdminPromotion = components['schemas']['AdminPromotion'];
type AdminPromotionRequest = components['schemas']['AdminPromotionRequest'];

/** Basis points: a percentage promotion takes at most all of the subtotal. */
const MAX_PERCENTAGE_BPS = 10_000;

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
  const code = canonicalCode(rawCode);
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

function invalid(param: string, message: string): BadRequest {
  return new BadRequest('invalid_request', message, { param });
}

/** The terms a body sets that the contract cannot check alone (their relations, and the clock). */
function checkTerms(body: AdminPromotionRequest, now: Date): { startsAt: Date | null; endsAt: Date | null } {
  if (body.kind === 'percentage' && body.value > MAX_PERCENTAGE_BPS)
    throw invalid('value', `A percentage is in basis points: at most ${MAX_PERCENTAGE_BPS} (100%).`);
  if (body.kind === 'fixed' && body.region_id === undefined)
    throw invalid('region_id', 'A fixed amount is in one currency: name the region whose carts it applies to.');
  const startsAt = body.starts_at === undefined ? null : new Date(body.starts_at);
  const endsAt = body.ends_at === undefined ? null : new Date(body.ends_at);
  if (startsAt && Number.isNaN(startsAt.getTime())) throw invalid('starts_at', 'starts_at is not a date-time.');
  if (endsAt && Number.isNaN(endsAt.getTime())) throw invalid('ends_at', 'ends_at is not a date-time.');
  if (endsAt && endsAt.getTime() <= now.getTime()) throw invalid('ends_at', 'ends_at must be in the future.');
  if (startsAt && endsAt && endsAt.getTime() <= startsAt.getTime())
    throw invalid('ends_at', 'ends_at must be later than starts_at.');
  return { startsAt, endsAt };
}

export async function createPromotion(deps: Deps, call: AdminCall<AdminPromotionRequest>) {
  const body = call.body;
  const code = canonicalCode(body.code);
  checkTerms(body, new Date(deps.now()));
  return runAdminChange(deps, call, 'createPromotion', { type: 'promotion', id: code }, async (trx, at) => {
    const { startsAt, endsAt } = checkTerms(body, at);
    let currency: string | null = null;
    if (body.region_id !== undefined) {
      const region = (await trx('regions').where({ id: body.region_id }).first('currency_code')) as
        { currency_code: string } | undefined;
      if (!region) throw invalid('region_id', `No region with id ${body.region_id}.`);
      currency = region.currency_code;
    }
    if (await lockPromotion(trx, code))
      throw new Conflict('promotion_exists', `A promotion with code ${code} exists already.`, undefined, {
        param: 'code',
      });
    const [created] = (await trx('promotions')
      .insert({
        code,
        kind: body.kind,
        value: body.value,
        currency_code: currency,
        min_subtotal: body.min_subtotal ?? null,
        starts_at: startsAt,
        ends_at: endsAt,
        usage_limit: body.usage_limit ?? null,
        times_redeemed: 0,
      })
      .onConflict('code')
      .ignore()
      .returning('*')) as PromotionRow[];
    // A concurrent create of the same code under another key committed first.
    if (!created)
      throw new Conflict('promotion_exists', `A promotion with code ${code} exists already.`, undefined, {
        param: 'code',
      });
    const view_ = view(created);
    return {
      before: {},
      after: { ...view_, reason: body.reason ?? null },
      render: async () => view_,
    };
  });
}
