import { describe, expect, it } from 'vitest';
import {
  FULFILMENT_STATUSES,
  ORDER_STATUSES,
  ORDER_TRANSITIONS,
  OrderTransitionRefused,
  nextState,
  transition,
  type OrderState,
  type OrderTransition,
} from '../../src/domain/order-states.js';
import { renderError } from '../../src/http/errors.js';

const states: OrderState[] = ORDER_STATUSES.flatMap((status) =>
  FULFILMENT_STATUSES.map((fulfilment) => ({ status, fulfilment })),
);

const key = (state: OrderState | undefined) => (state ? `${state.status}/${state.fulfilment}` : 'refused');

/** The whole table, written out: every state × every transition → the state it leaves, or `refused`. */
const EXPECTED: Record<string, Record<OrderTransition, string>> = {};
for (const state of states) {
  const { status, fulfilment } = state;
  const holdsMoney = ['paid', 'needs_review', 'partially_refunded'].includes(status);
  const shippable =
    ['paid', 'partially_refunded'].includes(status) && ['unfulfilled', 'partially_shipped'].includes(fulfilment);
  EXPECTED[key(state)] = {
    ship_part: shippable ? `${status}/partially_shipped` : 'refused',
    ship_rest: shippable ? `${status}/shipped` : 'refused',
    deliver: fulfilment === 'shipped' && status !== 'canceled' ? `${status}/delivered` : 'refused',
    cancel: holdsMoney && fulfilment === 'unfulfilled' ? 'canceled/unfulfilled' : 'refused',
    refund_part: holdsMoney
      ? `${status === 'needs_review' ? 'needs_review' : 'partially_refunded'}/${fulfilment}`
      : 'refused',
    refund_rest: holdsMoney ? `refunded/${fulfilment}` : 'refused',
  };
}

describe('order state machine', () => {
  it('covers 20 states and 6 transitions', () => {
    expect(states).toHaveLength(20);
    expect(ORDER_TRANSITIONS).toHaveLength(6);
  });

  describe.each(states)('from %o', (state) => {
    it.each([...ORDER_TRANSITIONS])('%s', (change) => {
      const expected = EXPECTED[key(state)]![change];
      expect(key(nextState(state, change))).toBe(expected);
      if (expected === 'refused') {
        let thrown: unknown;
        try {
          transition(state, change);
        } catch (error) {
          thrown = error;
        }
        expect(thrown).toBeInstanceOf(OrderTransitionRefused);
        const rendered = renderError(thrown, 'oauth');
        expect(rendered.status).toBe(409);
        expect(rendered.body).toMatchObject({
          error: 'order_transition_refused',
          status: state.status,
          fulfilment_status: state.fulfilment,
        });
        expect((rendered.body as { error_description: string }).error_description).toContain(state.status);
      } else {
        expect(key(transition(state, change))).toBe(expected);
      }
    });
  });

  it('never leaves a cancelled or fully refunded order holding money, and never un-ships', () => {
    for (const state of states)
      for (const change of ORDER_TRANSITIONS) {
        const next = nextState(state, change);
        if (!next) continue;
        if (state.status === 'canceled') expect.unreachable(`${key(state)} ${change}`);
        const rank = FULFILMENT_STATUSES.indexOf.bind(FULFILMENT_STATUSES);
        expect(rank(next.fulfilment)).toBeGreaterThanOrEqual(rank(state.fulfilment));
      }
  });
});
