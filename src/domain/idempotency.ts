// How the checkout surfaces (REST and MCP) tell a client its Idempotency-Key cannot be answered: the key holds
// another request's answer, or an earlier release's request still in flight.
import { Conflict, Unprocessable, type DomainError } from './errors.js';

const IN_FLIGHT_RETRY_AFTER_SECONDS = 1;

export function keyRefusalError(refusal: { kind: 'conflict' | 'in_flight' }): DomainError {
  if (refusal.kind === 'conflict') {
    return new Unprocessable(
      'idempotency_conflict',
      'This idempotency key was already used with a different request; use a new key for a new request.',
      { param: 'Idempotency-Key' },
    );
  }
  return new Conflict(
    'idempotency_in_flight',
    'A request with this idempotency key is still being processed; retry after a moment.',
    IN_FLIGHT_RETRY_AFTER_SECONDS,
    { param: 'Idempotency-Key' },
  );
}
