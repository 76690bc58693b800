// ACP fulfillment (openapi.agentic_checkout.yaml: create "from items and (optionally) buyer and fulfillment info",
// update "applies changes (items, fulfillment address, fulfillment option)"): a create with fulfillment_details is
// offered fulfillment_options; selecting one of them makes it the selection and the fulfillment total its cost, with
// totals that add up; an address no merchant can ship to (an unassigned country code) is a business outcome, a 2xx
// session not ready for payment whose error message names the field. The address is the fixture's.
import type { Json } from '../client.js';
import { acpTotalsProblems } from '../invariants.js';
import { expectThat, skip, type Check } from './check.js';
import { createSession } from './acp-checkout.js';
import { acpCall, acpSpec, acpToken, type AcpContext } from './acp-context.js';

const path = (id: string) => `/checkout_sessions/${encodeURIComponent(id)}`;

/** The fixture's address (UCP postal-address fields) as ACP's Address, or a skip without one. */
export function acpFixtureAddress(context: AcpContext): Json {
  acpToken(context); // without credentials, that is the reason to skip
  const address = context.fixture.address;
  if (!address?.street_address || !address.address_country)
    skip('the fixture has no address (street_address, address_country) to ship to');
  const name = [address.first_name, address.last_name].filter(Boolean).join(' ') || 'Conformance Buyer';
  return {
    name,
    line_one: address.street_address,
    ...(address.extended_address ? { line_two: address.extended_address } : {}),
    city: address.address_locality ?? '',
    state: address.address_region ?? '',
    country: address.address_country,
    postal_code: address.postal_code ?? '',
  };
}

const detailsOf = (address: Json) => ({ fulfillment_details: { name: address.name, address } });
const amountOf = (totals: Json[] | undefined, type: string) =>
  (totals ?? []).find((total: Json) => total.type === type)?.amount;
const errorAt = (session: Json, param: string) =>
  (session?.messages ?? []).some((message: Json) => message.type === 'error' && message.param === param);

export const acpFulfillmentChecks: Check<AcpContext>[] = [
  {
    id: 'acp.fulfillment.options',
    title: 'a create with fulfillment_details is offered fulfillment options, one of them selected',
    spec: acpSpec('CheckoutSession.fulfillment_options, selected_fulfillment_options'),
    async run(context) {
      const address = acpFixtureAddress(context);
      const created = await createSession(context, detailsOf(address));
      const options: Json[] = created.body.fulfillment_options ?? [];
      const selected: Json[] = created.body.selected_fulfillment_options ?? [];
      expectThat(options.length > 0, 'fulfillment_options offered for the address', created);
      expectThat(
        selected.every((choice) => options.some((option) => option.id === choice.option_id)),
        'selected_fulfillment_options naming offered options',
        created,
      );
      expectThat(
        created.body.fulfillment_details?.address?.country === address.country,
        `fulfillment_details.address.country ${address.country} echoed`,
        created,
      );
    },
  },
  {
    id: 'acp.fulfillment.select',
    title: 'selecting each offered shipping option makes it the selection and its cost the fulfillment total',
    spec: acpSpec('CheckoutSessionUpdateRequest.selected_fulfillment_options; Total (fulfillment)'),
    async run(context) {
      const created = await createSession(context, detailsOf(acpFixtureAddress(context)));
      const itemIds = (created.body.line_items ?? []).map((line: Json) => line.id);
      const options: Json[] = (created.body.fulfillment_options ?? []).filter(
        (option: Json) => option.type === 'shipping',
      );
      if (!options.length) skip('no shipping option offered');
      for (const option of options) {
        const updated = await acpCall(context, 'POST', path(created.body.id), {
          selected_fulfillment_options: [{ type: 'shipping', option_id: option.id, item_ids: itemIds }],
        });
        const selected = updated.body?.selected_fulfillment_options ?? [];
        const cost = amountOf(option.totals, 'fulfillment') ?? amountOf(option.totals, 'total');
        expectThat(
          updated.status === 200 && selected.some((choice: Json) => choice.option_id === option.id),
          `200 with ${option.id} selected`,
          updated,
        );
        expectThat(
          cost === undefined || amountOf(updated.body.totals, 'fulfillment') === cost,
          `the fulfillment total ${cost}, the cost of ${option.id}`,
          updated,
        );
        const problems = acpTotalsProblems(updated.body);
        expectThat(problems.length === 0, 'totals that add up', updated, problems[0]);
      }
    },
  },
  {
    id: 'acp.fulfillment.invalid-address',
    title:
      'an address in an unassigned country is a business outcome: not_ready_for_payment, an error naming the field',
    spec: acpSpec('CheckoutSession.messages (MessageError: "session is valid but has actionable issues")'),
    async run(context) {
      const address = acpFixtureAddress(context);
      const param = '$.fulfillment_details.address.country';
      const created = await createSession(context, detailsOf({ ...address, country: 'XX' }));
      expectThat(
        created.body.status === 'not_ready_for_payment' && errorAt(created.body, param),
        `status not_ready_for_payment with an error message at ${param}`,
        created,
      );
      const good = await createSession(context, detailsOf(address));
      const updated = await acpCall(context, 'POST', path(good.body.id), detailsOf({ ...address, country: 'XX' }));
      expectThat(
        updated.status === 200 && updated.body?.status === 'not_ready_for_payment' && errorAt(updated.body, param),
        `200, status not_ready_for_payment with an error message at ${param}`,
        updated,
      );
    },
  },
];
