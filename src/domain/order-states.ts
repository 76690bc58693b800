// The merchant's changes to an order, pure: which are allowed from which state, and the state they leave. An order's
// state is its payment status (`paid`, `needs_review`, `partially_refunded`, `refunded`, `canceled`) and its
// fulfilment status (`unfulfilled`, `partially_shipped`, `shipped`, `delivered`); anything else is refused with the
// order's current state named (OrderTransitionRefused, a 409 on the wire).
import { Conflict } from './errors.js';
import type { OrderStatus } from './orders.js';

export type AdminOrderStatus = OrderStatus;
export const ORDER_STATUSES: readonly AdminOrderStatus[] = [
  'paid',
  'needs_review',
  'partially_refunded',
  'refunded',
  'canceled',
];

export type FulfilmentStatus = 'unfulfilled' | 'partially_shipped' | 'shipped' | 'delivered';
export const FULFILMENT_STATUSES: readonly FulfilmentStatus[] = [
  'unfulfilled',
  'partially_shipped',
  'shipped',
  'delivered',
];

export interface OrderState {
  status: AdminOrderStatus;
  fulfilment: FulfilmentStatus;
}

/**
 * What the merchant does to an order: ship some of what is left (`ship_part`) or all of it (`ship_rest`), mark it
 * delivered, cancel it (with its refund), or refund some (`refund_part`) or all that is left (`refund_rest`).
 */
export type OrderTransition = 'ship_part' | 'ship_rest' | 'deliver' | 'cancel' | 'refund_part' | 'refund_rest';
export const ORDER_TRANSITIONS: readonly OrderTransition[] = [
  'ship_part',
  'ship_rest',
  'deliver',
  'cancel',
  'refund_part',
  'refund_rest',
];

/** Payment statuses with money still held: what can be shipped, cancelled or refunded. */
const HOLDS_MONEY: ReadonlySet<AdminOrderStatus> = new Set(['paid', 'needs_review', 'partially_refunded']);
/** Payment statuses an order can be shipped in: an order in review waits for a person to settle its payment first. */
const SHIPPABLE: ReadonlySet<AdminOrderStatus> = new Set(['paid', 'partially_refunded']);
const NOT_ALL_SHIPPED: ReadonlySet<FulfilmentStatus> = new Set(['unfulfilled', 'partially_shipped']);

const WORDS: Record<OrderTransition, string> = {
  ship_part: 'shipped',
  ship_rest: 'shipped',
  deliver: 'marked delivered',
  cancel: 'cancelled',
  refund_part: 'refunded',
  refund_rest: 'refunded',
};

/** A refused change, naming the order's current state (`details.status`, `details.fulfilment_status`). */
export class OrderTransitionRefused extends Conflict {
  constructor(
    readonly state: OrderState,
    readonly transition: OrderTransition,
  ) {
    super(
      'order_transition_refused',
      `This order cannot be ${WORDS[transition]}: it is ${state.status} and ${state.fulfilment.replace('_', ' ')}.`,
      undefined,
      { details: { status: state.status, fulfilment_status: state.fulfilment } },
    );
  }
}

/** The state after `transition`, or undefined when it is not allowed from `state`. */
export function nextState(state: OrderState, transition: OrderTransition): OrderState | undefined {
  const { status, fulfilment } = state;
  switch (transition) {
    case 'ship_part':
      return SHIPPABLE.has(status) && NOT_ALL_SHIPPED.has(fulfilment)
        ? { status, fulfilment: 'partially_shipped' }
        : undefined;
    case 'ship_rest':
      return SHIPPABLE.has(status) && NOT_ALL_SHIPPED.has(fulfilment) ? { status, fulfilment: 'shipped' } : undefined;
    case 'deliver':
      return fulfilment === 'shipped' && status !== 'canceled' ? { status, fulfilment: 'delivered' } : undefined;
    case 'cancel':
      return HOLDS_MONEY.has(status) && fulfilment === 'unfulfilled'
        ? { status: 'canceled', fulfilment: 'unfulfilled' }
        : undefined;
    case 'refund_part':
      return HOLDS_MONEY.has(status)
        ? { status: status === 'needs_review' ? 'needs_review' : 'partially_refunded', fulfilment }
        : undefined;
    case 'refund_rest':
      return HOLDS_MONEY.has(status) ? { status: 'refunded', fulfilment } : undefined;
  }
}

/** The state after `transition`; a transition not allowed from `state` throws OrderTransitionRefused. */
export function transition(state: OrderState, change: OrderTransition): OrderState {
  const next = nextState(state, change);
  if (!next) throw new OrderTransitionRefused(state, change);
  return next;
}
