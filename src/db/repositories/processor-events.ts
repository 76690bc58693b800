// The processors' events, each recorded once: what makes a redelivered webhook change nothing.
import { asPrepared, type Db } from '../knex.js';
import type { Processor } from './orders.js';

/** Records a processor event once. False when it was already recorded (a redelivery): the caller does nothing more. */
export async function recordEvent(
  db: Db,
  processor: Processor,
  eventId: string,
  type: string,
  at: Date,
): Promise<boolean> {
  const inserted = await asPrepared(
    'record_processor_event',
    db('processor_events')
      .insert({ processor, event_id: eventId, type, received_at: at })
      .onConflict(['processor', 'event_id'])
      .ignore()
      .returning('event_id'),
  );
  return inserted.length > 0;
}
