// UCP fulfillment extension (dev.ucp.shopping.fulfillment, extends checkout): once negotiated, a checkout shows its
// fulfillment methods; a create with a shipping destination is offered options in a group, one selected; an update
// selects another and the cart's fulfillment total follows it; the totals add up; an address nobody ships to (an
// unassigned country code) is a business outcome, a checkout not ready for payment (`incomplete`) with an error at the
// address field's path, never a protocol error or a 5xx. The destination is the fixture's `address` when it has a
// street address, else a US address.
import type { Json } from '../client.js';
import { ucpTotalsProblems } from '../invariants.js';
import { expectThat, type Check } from './check.js';
import { ucpCreateBody, ucpSpec, type UcpContext } from './ucp-context.js';
import { createCheckout } from './ucp-checkout.js';

const FULFILLMENT = 'dev.ucp.shopping.fulfillment';

/** A deliverable address: the fixture's, else one in the United States (UCP's own examples' address). */
function destination(context: UcpContext): Json {
  const address = context.fixture.address;
  if (address?.street_address && address.address_country) return { id: 'conformance_1', ...address };
  return {
    id: 'conformance_1',
    first_name: 'Ada',
    last_name: 'Lovelace',
    street_address: '1600 Amphitheatre Pkwy',
    address_locality: 'Mountain View',
    address_region: 'CA',
    postal_code: '94043',
    address_country: 'US',
  };
}

const shipTo = (address: Json) => ({ methods: [{ type: 'shipping', destinations: [address] }] });

/** The first shipping method of a checkout, or undefined. */
const shippingMethod = (checkout: Json): Json | undefined =>
  (checkout?.fulfillment?.methods ?? []).find((method: Json) => method.type === 'shipping');

/** A checkout created with the deliverable destination, its shipping method and first group checked. */
async function createShipped(context: UcpContext) {
  const created = await createCheckout(context, { fulfillment: shipTo(destination(context)) });
  expectThat(
    created.body.ucp?.capabilities?.[FULFILLMENT],
    `ucp.capabilities naming ${FULFILLMENT} (negotiated: the platform profile declares it)`,
    created.answer,
  );
  const method = shippingMethod(created.body);
  expectThat(method, 'fulfillment.methods with a shipping method', created.answer);
  const group = (method.groups ?? [])[0];
  expectThat(
    typeof method.selected_destination_id === 'string' &&
      (method.destinations ?? []).some((entry: Json) => entry.id === method.selected_destination_id),
    'the destination sent, selected (selected_destination_id names one of destinations)',
    created.answer,
  );
  expectThat(
    group && Array.isArray(group.options) && group.options.length > 0,
    'a group offering fulfillment options for the destination',
    created.answer,
  );
  return { created, method, group };
}

const fulfillmentTotal = (checkout: Json) =>
  (checkout.totals ?? [])
    .filter((total: Json) => total.type === 'fulfillment')
    .reduce((sum: number, total: Json) => sum + total.amount, 0);

const optionAmount = (option: Json) =>
  (option.totals ?? [])
    .filter((total: Json) => total.type === 'fulfillment' || total.type === 'total')
    .reduce((sum: number, total: Json) => sum + total.amount, 0);

export const ucpFulfillmentChecks: Check<UcpContext>[] = [
  {
    id: 'ucp.fulfillment.negotiated',
    title: 'with the extension negotiated, a checkout shows fulfillment.methods covering its lines',
    spec: ucpSpec('fulfillment', 'Overview'),
    async run(context) {
      const created = await createCheckout(context);
      expectThat(
        created.body.ucp?.capabilities?.[FULFILLMENT],
        `ucp.capabilities naming ${FULFILLMENT}`,
        created.answer,
      );
      const methods: Json[] = created.body.fulfillment?.methods ?? [];
      const covered = new Set(methods.flatMap((method) => method.line_item_ids ?? []));
      expectThat(
        (created.body.line_items ?? []).every((line: Json) => covered.has(line.id)),
        'every line item id in some fulfillment method',
        created.answer,
      );
    },
  },
  {
    id: 'ucp.fulfillment.options',
    title: 'a create with a shipping destination is offered options, one selected, with totals',
    spec: ucpSpec('fulfillment', 'Fulfillment Groups and Options'),
    async run(context) {
      const { created, group } = await createShipped(context);
      expectThat(
        group.options.every((option: Json) => typeof option.id === 'string' && Array.isArray(option.totals)),
        'each option with an id and totals',
        created.answer,
      );
      expectThat(
        group.selected_option_id === undefined ||
          group.selected_option_id === null ||
          group.options.some((option: Json) => option.id === group.selected_option_id),
        'selected_option_id naming one of the options',
        created.answer,
      );
    },
  },
  {
    id: 'ucp.fulfillment.select-option',
    title: "selecting an option re-prices the checkout: the fulfillment total is the option's",
    spec: ucpSpec('fulfillment', 'Selecting Options'),
    async run(context) {
      const { created, method, group } = await createShipped(context);
      const option = group.options.at(-1);
      const lineItems = (created.body.line_items ?? []).map((line: Json) => ({
        id: line.id,
        item: { id: line.item.id },
        quantity: line.quantity,
      }));
      const updated = await context.transport.update(created.body.id, {
        id: created.body.id,
        line_items: lineItems,
        fulfillment: {
          methods: [
            {
              id: method.id,
              type: method.type,
              line_item_ids: method.line_item_ids,
              selected_destination_id: method.selected_destination_id,
              destinations: method.destinations,
              groups: [{ id: group.id, selected_option_id: option.id }],
            },
          ],
        },
      });
      expectThat(
        !updated.protocolError && updated.body?.id === created.body.id,
        'the updated checkout',
        updated.answer,
      );
      const selected = (shippingMethod(updated.body)?.groups ?? [])[0];
      expectThat(selected?.selected_option_id === option.id, `selected_option_id ${option.id}`, updated.answer);
      const chosen = (selected.options ?? []).find((entry: Json) => entry.id === option.id);
      expectThat(
        chosen && fulfillmentTotal(updated.body) === optionAmount(chosen),
        `a fulfillment total equal to option ${option.id}'s (${chosen ? optionAmount(chosen) : '?'})`,
        updated.answer,
      );
    },
  },
  {
    id: 'ucp.fulfillment.totals',
    title: 'the totals of a checkout with a destination add up, itemized entries included',
    spec: ucpSpec('checkout', 'Totals'),
    async run(context) {
      const { created } = await createShipped(context);
      const problems = ucpTotalsProblems(created.body);
      expectThat(problems.length === 0, 'totals that add up', created.answer, problems.join('; '));
    },
  },
  {
    id: 'ucp.fulfillment.invalid-address',
    title: 'an address with an unassigned country is a checkout not ready for payment naming the field',
    spec: ucpSpec('checkout', 'Error Handling (business outcomes are messages)'),
    async run(context) {
      const address = { ...destination(context), address_country: 'ZZ' };
      const created = await context.transport.create(ucpCreateBody(context, { fulfillment: shipTo(address) }));
      expectThat(created.status < 500, 'not a 5xx', created.answer);
      expectThat(
        !created.protocolError && created.body?.ucp?.status !== 'error' && typeof created.body?.id === 'string',
        'a checkout (a business outcome, not a protocol error)',
        created.answer,
      );
      expectThat(created.body.status === 'incomplete', 'status incomplete (not ready for payment)', created.answer);
      const messages: Json[] = created.body.messages ?? [];
      expectThat(
        messages.some(
          (message) =>
            message.type === 'error' &&
            typeof message.path === 'string' &&
            message.path.startsWith('$.fulfillment') &&
            message.path.endsWith('address_country'),
        ),
        'an error message at $.fulfillment…address_country',
        created.answer,
      );
    },
  },
];
