// The arithmetic every binding session must satisfy (U-C2 and A-C3 of the design), as lists of broken rules: the
// conformance runner applies them to every checkout it receives, and the binding tests to theirs.
type Json = any;
type Total = { type: string; amount: number; lines?: Array<{ amount: number }> };

const sum = (values: number[]) => values.reduce((acc, value) => acc + value, 0);

/**
 * U-C2: one subtotal and one total, integer amounts, discounts < 0, the entries add up (and an itemized entry's
 * lines to it), allocations match.
 */
export function ucpTotalsProblems(checkout: Json): string[] {
  const problems: string[] = [];
  const check = (where: string, totals: Total[]) => {
    for (const type of ['subtotal', 'total']) {
      const count = totals.filter((total) => total.type === type).length;
      if (count !== 1) problems.push(`${where}: ${count} ${type} entries`);
    }
    for (const { type, amount } of totals) {
      if (!Number.isInteger(amount)) problems.push(`${where}: ${type} ${amount} is not an integer`);
      if ((type === 'items_discount' || type === 'discount') && !(amount < 0))
        problems.push(`${where}: ${type} ${amount} is not negative`);
      if (['subtotal', 'fulfillment', 'tax'].includes(type) && amount < 0)
        problems.push(`${where}: ${type} ${amount} is negative`);
    }
    // An itemized entry (totals.json `lines`, 2026-08-25): its lines add up to it.
    for (const { type, amount, lines } of totals)
      if (Array.isArray(lines) && sum(lines.map((line) => line.amount)) !== amount)
        problems.push(
          `${where}: the lines of ${type} add up to ${sum(lines.map((line) => line.amount))}, not ${amount}`,
        );
    const entries = sum(totals.filter((total) => total.type !== 'total').map((total) => total.amount));
    const total = totals.find((entry) => entry.type === 'total')?.amount;
    if (entries !== total) problems.push(`${where}: the entries add up to ${entries}, total is ${total}`);
  };
  check('$.totals', checkout.totals ?? []);
  const lines: Json[] = checkout.line_items ?? [];
  lines.forEach((line, index) => check(`$.line_items[${index}].totals`, line.totals ?? []));
  const discountOf = (totals: Total[]) => totals.find((total) => total.type === 'items_discount')?.amount ?? 0;
  const lineDiscount = sum(lines.map((line) => discountOf(line.totals ?? [])));
  if (lineDiscount !== discountOf(checkout.totals ?? []))
    problems.push(`the lines' items_discount add up to ${lineDiscount}, the cart's is ${discountOf(checkout.totals)}`);
  for (const applied of checkout.discounts?.applied ?? []) {
    const allocated = sum((applied.allocations ?? []).map((allocation: Json) => allocation.amount));
    if (allocated !== applied.amount)
      problems.push(`${applied.code}: allocations ${allocated} ≠ amount ${applied.amount}`);
    if (applied.amount !== -lineDiscount) problems.push(`${applied.code}: amount ${applied.amount} ≠ −${lineDiscount}`);
  }
  return problems;
}

/**
 * Whether a `tax` total is tax inside the amounts above it (EU, UK and Japan prices with a destination), not added:
 * its `description` starts with "Included" (docs/conformance.md).
 */
const taxIncluded = (totals: Array<Total & { description?: string }>) =>
  totals.some((total) => total.type === 'tax' && /^included\b/i.test(total.description ?? ''));

/**
 * A-C3: integer amounts, base − discount = subtotal, subtotal + fulfillment + tax = total (tax left out where it is
 * included in the amounts), discounts add up; no legacy keys.
 */
export function acpTotalsProblems(session: Json): string[] {
  const problems: string[] = [];
  const of = (totals: Total[], type: string) => totals.find((total) => total.type === type)?.amount ?? 0;
  const lines: Json[] = session.line_items ?? [];
  const all: Array<[string, Total[]]> = [
    ['$.totals', session.totals ?? []],
    ...lines.map((line, index): [string, Total[]] => [`$.line_items[${index}].totals`, line.totals ?? []]),
  ];
  for (const [where, totals] of all) {
    for (const { type, amount } of totals)
      if (!Number.isInteger(amount)) problems.push(`${where}: ${type} ${amount} is not an integer`);
    if (of(totals, 'items_base_amount') - of(totals, 'items_discount') !== of(totals, 'subtotal'))
      problems.push(`${where}: items_base_amount − items_discount ≠ subtotal`);
    if (taxIncluded(totals)) {
      if (of(totals, 'subtotal') + of(totals, 'fulfillment') !== of(totals, 'total'))
        problems.push(`${where}: subtotal + fulfillment ≠ total (tax included)`);
    } else if (of(totals, 'subtotal') + of(totals, 'fulfillment') + of(totals, 'tax') !== of(totals, 'total'))
      problems.push(`${where}: subtotal + fulfillment + tax ≠ total`);
    const tax = totals.find((total) => total.type === 'tax') as (Total & { breakdown?: Total[] }) | undefined;
    if (tax?.breakdown && sum(tax.breakdown.map((entry) => entry.amount)) !== tax.amount)
      problems.push(`${where}: the tax breakdown does not add up to ${tax.amount}`);
  }
  const lineDiscounts = sum(lines.map((line) => of(line.totals ?? [], 'items_discount')));
  if (lineDiscounts !== of(session.totals ?? [], 'items_discount'))
    problems.push(
      `the lines' items_discount add up to ${lineDiscounts}, the session's is ${of(session.totals, 'items_discount')}`,
    );
  if ((session.discounts?.applied?.[0]?.amount ?? 0) !== lineDiscounts)
    problems.push(`discounts.applied[0].amount ≠ ${lineDiscounts}`);
  for (const key of ['object', 'region_id', 'promo_codes', 'payment_provider'])
    if (key in session) problems.push(`legacy key ${key}`);
  return problems;
}
