// The checkouts made at a processor for a session: the quote each was made for, and until when it can be paid.
import type { Quote } from '../../domain/orders.js';
import type { Db } from '../knex.js';
import type { Processor } from './orders.js';

export interface ProcessorCheckoutRow {
  session_id: string;
  processor: Processor;
  quote_hash: string;
  quote: Quote;
  reference: string;
  url: string;
  expires_at: Date;
  created_at: Date;
}

/** The session's latest checkout at the processor. */
export async function latestProcessorCheckout(
  db: Db,
  processor: Processor,
  sessionId: string,
): Promise<ProcessorCheckoutRow | undefined> {
  return (await db('processor_checkouts')
    .where({ processor, session_id: sessionId })
    .orderBy('created_at', 'desc')
    .first()) as ProcessorCheckoutRow | undefined;
}

/**
 * Stores a checkout made at the processor. Concurrent first visits (any instance) ask the processor with one
 * idempotency key and get the same checkout back: the first to store it wins, the others reuse it.
 */
export async function saveProcessorCheckout(db: Db, row: ProcessorCheckoutRow): Promise<void> {
  await db('processor_checkouts')
    .insert({ ...row, quote: JSON.stringify(row.quote) })
    .onConflict(['processor', 'reference'])
    .ignore();
}

/** The quote sent to the processor under `reference` for the session, if this store made that checkout. */
export async function sentQuote(
  db: Db,
  processor: Processor,
  reference: string | undefined,
  sessionId: string,
): Promise<Quote | undefined> {
  if (!reference) return undefined;
  const row = (await db('processor_checkouts')
    .where({ processor, reference, session_id: sessionId })
    .first('quote')) as { quote: Quote } | undefined;
  return row?.quote;
}

/** The session's checkouts at the processor that can still be paid at `now`. */
export async function openProcessorCheckouts(
  db: Db,
  processor: Processor,
  sessionId: string,
  now: Date,
): Promise<ProcessorCheckoutRow[]> {
  return (await db('processor_checkouts')
    .where({ processor, session_id: sessionId })
    .where('expires_at', '>', now)) as ProcessorCheckoutRow[];
}

/** Records that the processor expired the checkout at `at` (it can no longer be paid, nor reused). */
export async function markProcessorCheckoutExpired(
  db: Db,
  processor: Processor,
  reference: string,
  at: Date,
): Promise<void> {
  await db('processor_checkouts')
    .where({ processor, reference })
    .where('expires_at', '>', at)
    .update({ expires_at: at });
}
