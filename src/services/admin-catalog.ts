// The merchant's catalogue changes (issue #35, scope admin:catalog): a variant's stock, set or adjusted atomically
// (never below zero for a kept variant), its prices per region, and a product's publication (an unpublished product
// leaves every catalogue read and cannot be bought: src/db/repositories/catalog.ts). Each under its Idempotency-Key with its audit
// event (runAdminChange). The catalogue's version triggers (migrations 007, 008) make every instance's earlier reads
// and open sessions see the change.
import type { components } from '../../codegen/types.js';
import * as repo from '../db/repositories/admin-orders.js';
import type { Deps } from '../deps.js';
import { BadRequest, Conflict, NotFound } from '../domain/errors.js';
import { runAdminChange, type AdminCall } from './admin-changes.js';

type Schemas = components['schemas'];

function noVariant(id: string): NotFound {
  return new NotFound(`No variant with id ${id}.`, { param: 'id' });
}

function stockView(row: repo.VariantStockRow): Schemas['AdminVariantStock'] {
  return {
    variant_id: row.id,
    manage_inventory: row.manage_inventory,
    allow_backorder: row.allow_backorder,
    inventory_quantity: row.inventory_quantity,
  };
}

export async function adjustStock(deps: Deps, id: string, call: AdminCall<Schemas['AdminStockRequest']>) {
  const { quantity, adjustment } = call.body;
  if ((quantity === undefined) === (adjustment === undefined))
    throw new BadRequest('invalid_request', 'Send exactly one of quantity and adjustment.', { param: 'body' });
  return runAdminChange(deps, call, 'adjustVariantStock', { type: 'variant', id }, async (trx) => {
    const before = await repo.lockVariant(trx, id);
    if (!before) throw noVariant(id);
    const after = await repo.changeStock(trx, id, quantity === undefined ? { adjustment: adjustment! } : { quantity });
    if (!after)
      throw new Conflict(
        'stock_would_go_negative',
        `Variant ${id} has ${before.inventory_quantity} in stock; taking ${-adjustment!} would go below zero.`,
        undefined,
        { param: 'adjustment' },
      );
    return {
      before: { inventory_quantity: before.inventory_quantity },
      after: { inventory_quantity: after.inventory_quantity, reason: call.body.reason ?? null },
      render: async () => stockView(after),
    };
  });
}

export async function updatePrices(deps: Deps, id: string, call: AdminCall<Schemas['AdminPricesRequest']>) {
  const regions = call.body.prices.map((price) => price.region_id);
  const twice = regions.findIndex((region, index) => regions.indexOf(region) !== index);
  if (twice >= 0)
    throw new BadRequest('invalid_request', `Region ${regions[twice]} is named twice.`, {
      param: `prices[${twice}].region_id`,
    });
  return runAdminChange(deps, call, 'updateVariantPrices', { type: 'variant', id }, async (trx) => {
    if (!(await repo.lockVariant(trx, id))) throw noVariant(id);
    const known = await repo.knownRegions(trx, regions);
    const unknown = regions.findIndex((region) => !known.includes(region));
    if (unknown >= 0)
      throw new BadRequest('invalid_request', `No region with id ${regions[unknown]}.`, {
        param: `prices[${unknown}].region_id`,
      });
    const before = await repo.pricesOf(trx, id);
    await repo.upsertPrices(trx, id, call.body.prices);
    const after = await repo.pricesOf(trx, id);
    const amounts = (rows: repo.VariantPriceRow[]) =>
      Object.fromEntries(
        rows.filter((row) => regions.includes(row.region_id)).map((row) => [row.region_id, row.amount]),
      );
    return {
      before: { prices: amounts(before) },
      after: { prices: amounts(after) },
      render: async () => ({ variant_id: id, prices: after }),
    };
  });
}

interface ProductRow {
  id: string;
  handle: string;
  title: string;
  published: boolean;
}

/** Publishes or unpublishes the product named by id or handle; setting the state it has changes nothing. */
export async function setProductPublished(
  deps: Deps,
  idOrHandle: string,
  published: boolean,
  call: AdminCall<Schemas['AdminNote'] | undefined>,
) {
  const operation = published ? 'publishProduct' : 'unpublishProduct';
  // Named by handle or id, recorded (and keyed) by its id; products are never deleted.
  const named = (await deps
    .db('products')
    .where((where) => where.where('id', idOrHandle).orWhere('handle', idOrHandle))
    .first('id')) as { id: string } | undefined;
  if (!named) throw new NotFound(`No product with id or handle ${idOrHandle}.`, { param: 'id' });
  return runAdminChange(deps, call, operation, { type: 'product', id: named.id }, async (trx) => {
    const before = (await trx('products')
      .where({ id: named.id })
      .forUpdate()
      .first('id', 'handle', 'title', 'published')) as ProductRow;
    if (before.published !== published) await trx('products').where({ id: before.id }).update({ published });
    const after: ProductRow = { ...before, published };
    return {
      before: { published: before.published },
      after: { published, reason: call.body?.reason ?? null },
      render: async () => after,
    };
  });
}
