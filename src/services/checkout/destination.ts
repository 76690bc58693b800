// A session's destination and shipping choice (issue #32, docs/fulfilment-and-tax.md), as REST, agent carts and MCP
// send them: the address checked against ISO 3166 and the countries of the session's region, the option against the
// region's options, and the terms they bring to the price (the tax rates in force there today, the options) loaded
// beside the session read. A problem is the caller's: 400 invalid_address naming the field.
import type { components } from '../../../codegen/types.js';
import type { StoredSession } from '../../db/repositories/carts.js';
import { loadFulfilmentTerms, regionCountryCodes } from '../../db/repositories/fulfilment.js';
import type { Db } from '../../db/knex.js';
import {
  checkDestination,
  type Destination,
  type DestinationField,
  type DestinationInput,
  type DestinationProblem,
} from '../../domain/destination.js';
import { BadRequest } from '../../domain/errors.js';
import type { FulfilmentTerms, ShippingCode } from '../../domain/fulfilment.js';
import type { Deps } from '../../deps.js';

export type ShippingAddressInput = components['schemas']['ShippingAddressInput'];

/** Each field of the domain's address as the contract names it. */
const WIRE_FIELDS: Record<DestinationField, keyof ShippingAddressInput> = {
  recipientName: 'recipient_name',
  line1: 'line1',
  line2: 'line2',
  city: 'city',
  region: 'region',
  postalCode: 'postal_code',
  country: 'country',
};

/** The first problem as REST reports it: `invalid_address`, `param` the field, the message every problem's. */
function invalidAddress(problems: DestinationProblem[]): BadRequest {
  const wire = (problem: DestinationProblem) => WIRE_FIELDS[problem.field];
  const messages = problems.map((problem) => problem.message.replace(`${problem.field}:`, `${wire(problem)}:`));
  return new BadRequest(
    'invalid_address',
    `shipping_address is not an address the store ships to: ${messages.join('; ')}.`,
    {
      param: `shipping_address.${wire(problems[0]!)}`,
    },
  );
}

/** What a session keeps of its destination: the checked address and the option chosen. */
export interface SessionDestination {
  shipping_address: Destination | null;
  shipping_option: ShippingCode | null;
}

/**
 * The address (checked against the countries `regionId` ships to) and option a request sends, or the caller's error
 * naming the field. `undefined` leaves what the session had; `null` clears the address.
 */
export async function checkedDestination(
  db: Db,
  regionId: string,
  address: ShippingAddressInput | null | undefined,
  option: ShippingCode | undefined,
): Promise<Partial<SessionDestination>> {
  const checked: Partial<SessionDestination> = option === undefined ? {} : { shipping_option: option };
  if (address === undefined) return checked;
  if (address === null) return { ...checked, shipping_address: null };
  const check = checkDestination(
    {
      recipientName: address.recipient_name,
      line1: address.line1,
      line2: address.line2,
      city: address.city,
      region: address.region,
      postalCode: address.postal_code,
      country: address.country,
    },
    await regionCountryCodes(db, regionId),
  );
  if (!check.ok) throw invalidAddress(check.problems);
  return { ...checked, shipping_address: check.destination };
}

/** The terms a cart's destination brings to its price today: undefined without an address. */
export function termsFor(
  deps: Deps,
  regionId: string,
  address: Destination | null | undefined,
  db: Db = deps.db,
): Promise<FulfilmentTerms | undefined> {
  if (!address) return Promise.resolve(undefined);
  return loadFulfilmentTerms(db, {
    regionId,
    country: address.country,
    subdivision: address.region,
    at: new Date(deps.now()),
  });
}

/**
 * A stored session with the terms its destination brings (the same read, when it has none), read in `db` (the
 * transaction a protocol change runs in).
 */
export async function withTerms(deps: Deps, stored: StoredSession, db: Db = deps.db): Promise<StoredSession> {
  if (!stored.cart.shipping_address || stored.order) return stored;
  const terms = await termsFor(deps, stored.cart.region_id, stored.cart.shipping_address, db);
  const { cart, lines, region, promotions, order } = stored;
  return { cart, lines, region, promotions, order, terms };
}

/**
 * A protocol's address (in the domain's terms, the binding having mapped its fields) checked against the countries
 * `regionId` ships to, with the terms it brings today; or every problem, for the binding to report as its business
 * outcome (UCP and ACP answer a checkout not ready for payment rather than an error).
 */
export async function checkedProtocolDestination(
  deps: Deps,
  db: Db,
  regionId: string,
  address: DestinationInput,
): Promise<
  | { ok: true; destination: Destination; terms: FulfilmentTerms | undefined }
  | { ok: false; problems: DestinationProblem[] }
> {
  const check = checkDestination(address, await regionCountryCodes(db, regionId));
  if (!check.ok) return check;
  return { ok: true, destination: check.destination, terms: await termsFor(deps, regionId, check.destination, db) };
}
