// Money is an integer number of minor units inside the service, with each currency's ISO 4217 exponent (from
// dinero.js's currency table). Major units appear only at the API boundary, through toMajorUnits. The arithmetic is
// plain integer arithmetic with the same rules dinero.js applies (test/unit/money.test.ts checks it against dinero.js):
// dinero.js's objects cost about 6 % of the CPU of a session read, which prices the cart anew every time.
import type { DineroCurrency } from 'dinero.js';
import * as currencies from 'dinero.js/currencies';

export type MinorUnits = number;

const BASIS_POINTS = 10_000; // 1 basis point = 0.0001

/**
 * The table by its upper- and lower-case codes, read once: pricing asks for a line's currency several times, and a
 * keyed read of the module namespace after upper-casing the code was 45 ns each.
 */
const CURRENCIES: ReadonlyMap<string, DineroCurrency<number>> = new Map(
  Object.entries(currencies as Record<string, DineroCurrency<number>>).flatMap(([code, currency]) => [
    [code, currency],
    [code.toLowerCase(), currency],
  ]),
);

/** A currency of the table; only decimal ones (base 10): amounts are shown as decimal numbers. */
export function currencyOf(code: string): DineroCurrency<number> {
  const currency = CURRENCIES.get(code) ?? CURRENCIES.get(code.toUpperCase());
  if (!currency) throw new Error(`Unknown ISO 4217 currency: ${code}`);
  if (currency.base !== 10) throw new Error(`Currency ${code} is not decimal`);
  return currency;
}

function requireMinorUnits(amount: MinorUnits): void {
  if (!Number.isSafeInteger(amount)) throw new Error(`Money amounts are integer minor units, got ${amount}`);
}

/**
 * The API's representation: a number of major units with at most the currency's digits (1299 usd → 12.99). Division
 * is correctly rounded, so this is the number nearest the exact decimal: the one its decimal text would parse to.
 */
export function toMajorUnits(amount: MinorUnits, currencyCode: string): number {
  requireMinorUnits(amount);
  return amount / 10 ** currencyOf(currencyCode).exponent;
}

/** `amount / divisor` to the nearest integer, ties towards +∞ (dinero.js's halfUp). */
function divideHalfUp(amount: number, divisor: number): number {
  const quotient = Math.trunc(amount / divisor);
  const twiceRemainder = 2 * Math.abs(amount % divisor);
  if (twiceRemainder > divisor || (twiceRemainder === divisor && amount > 0))
    return amount > 0 ? quotient + 1 : quotient - 1;
  return quotient;
}

/** `amount × basisPoints / 10000`, rounded once, half up, to the currency's minor unit. */
export function applyRate(amount: MinorUnits, basisPoints: number, currencyCode: string): MinorUnits {
  requireMinorUnits(amount);
  currencyOf(currencyCode);
  return divideHalfUp(amount * basisPoints, BASIS_POINTS);
}

/**
 * `amount × numerator / denominator`, rounded once, half up, to the currency's minor unit: a rate in any unit
 * (tax rates in thousandths of a percent, src/domain/tax.ts) or a share of a tax-inclusive amount.
 */
export function applyRatio(
  amount: MinorUnits,
  numerator: number,
  denominator: number,
  currencyCode: string,
): MinorUnits {
  requireMinorUnits(amount);
  currencyOf(currencyCode);
  if (!Number.isSafeInteger(numerator) || !Number.isSafeInteger(denominator) || denominator <= 0)
    throw new Error(`A ratio is of integers over a positive integer, got ${numerator}/${denominator}`);
  const product = amount * numerator;
  if (Number.isSafeInteger(product)) return divideHalfUp(product, denominator);
  // Beyond 2^53 the product is not exact as a number: the same rule in BigInt arithmetic.
  const exact = BigInt(amount) * BigInt(numerator);
  const divisor = BigInt(denominator);
  const quotient = exact / divisor;
  const twiceRemainder = 2n * (exact % divisor < 0n ? -(exact % divisor) : exact % divisor);
  if (twiceRemainder > divisor || (twiceRemainder === divisor && exact > 0n))
    return Number(exact > 0n ? quotient + 1n : quotient - 1n);
  return Number(quotient);
}

/**
 * Splits `amount` across `weights` in proportion, in whole minor units that sum exactly to `amount`: each share
 * rounded towards zero, then what is left one unit at a time to the heaviest weights first (dinero.js's allocate).
 */
export function allocateByWeight(amount: MinorUnits, weights: MinorUnits[], currencyCode: string): MinorUnits[] {
  requireMinorUnits(amount);
  currencyOf(currencyCode);
  if (weights.length === 0) return [];
  if (weights.some((weight) => weight < 0)) throw new Error('Weights must be positive');
  if (weights.every((weight) => weight === 0)) return weights.map((_, index) => (index === 0 ? amount : 0));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const shares = weights.map((weight) => Math.trunc((amount * weight) / total) || 0);
  let remainder = amount - shares.reduce((sum, share) => sum + share, 0);
  // The order dinero.js hands out the remainder in, ties included (the same comparator on the same engine).
  const heaviestFirst = weights
    .map((weight, index) => ({ weight, index }))
    .filter(({ weight }) => weight !== 0)
    .sort((a, b) => (a.weight > b.weight ? -1 : 1))
    .map(({ index }) => index);
  const step = amount >= 0 ? 1 : -1;
  for (let i = 0; remainder !== 0; i++) {
    shares[heaviestFirst[i % heaviestFirst.length]!]! += step;
    remainder -= step;
  }
  return shares;
}
