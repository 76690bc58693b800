// The write of an ACP or UCP create under its key: the session with its answer (storeProtocolCreate), group-committed
// with other creates'. Its read is every create's, findNewCartReads (NEW_CART_READS).
import { batchedPerDatabase, numberedPlaceholders, runPrepared, type Db } from '../knex.js';
import { NEW_CARTS_AND_LINES, newCartsAndLinesBindings, type NewCartRow, type NewLine } from './carts.js';
import {
  INSERT_PROTOCOL_ANSWERS,
  MAX_ANSWERS_PER_STATEMENT,
  protocolAnswersBindings,
  protocolRecordOf,
  type AnswerToStore,
  type ProtocolCreateStored,
  type StoredAnswer,
} from './protocol-idempotency.js';

/**
 * A create's answer under its key, and the session it reports, if it created one; `pricedAt`: the catalogue version
 * of the earlier read the create was priced from, undefined when priced from its own read.
 */
export interface ProtocolCreateToStore extends AnswerToStore {
  created: { cart: NewCartRow; lines: NewLine[] } | undefined;
}

/**
 * Many creates' answers and sessions in one statement of fixed text: each session only if its key took the answer,
 * and for each answer that did not, the key's record (as of the statement's start: one committed meanwhile is not
 * there). Run as written (runPrepared), without Knex's raw query building its text and bindings again for every
 * batch. Exported so that tests can count the statements sent.
 */
export const STORE_PROTOCOL_CREATES = numberedPlaceholders(
  `with ${INSERT_PROTOCOL_ANSWERS}, ${NEW_CARTS_AND_LINES}
  select answers.scope, answers.key, claimed.key is not null as stored,
    case when claimed.key is null then ${protocolRecordOf('answers.scope', 'answers.key')} end as record
  from answers left join claimed on claimed.scope = answers.scope and claimed.key = answers.key`,
);

const keyOf = (scope: string, key: string) => `${scope}\n${key}`;

async function storeMany(db: Db, batch: ProtocolCreateToStore[]): Promise<ProtocolCreateStored[]> {
  // A key twice in one batch: the first one goes, the others are not stored (as if they came right after it, they
  // read its answer again). In key order, so two statements claiming the same keys take their locks in that order.
  const keys = batch.map(({ answer }) => keyOf(answer.scope, answer.key));
  const firsts = new Map<string, ProtocolCreateToStore>();
  batch.forEach((item, index) => {
    if (!firsts.has(keys[index]!)) firsts.set(keys[index]!, item);
  });
  const sent = [...firsts.keys()].sort().map((key) => firsts.get(key)!);
  const sessions = sent.flatMap(({ answer, created }) =>
    created ? [{ cart: created.cart, lines: created.lines, key: answer }] : [],
  );
  const rows = await runPrepared<{ scope: string; key: string; stored: boolean; record: StoredAnswer | null }>(
    db,
    'store_protocol_creates',
    STORE_PROTOCOL_CREATES,
    [...protocolAnswersBindings(sent), ...newCartsAndLinesBindings(sessions)],
  );
  const outcomes = new Map(
    rows.map((row): [string, ProtocolCreateStored] => [
      keyOf(row.scope, row.key),
      row.stored ? { stored: true } : { stored: false, keyRecord: row.record ?? undefined },
    ]),
  );
  return batch.map((item, index) =>
    firsts.get(keys[index]!) === item ? outcomes.get(keys[index]!)! : { stored: false, keyRecord: undefined },
  );
}

/**
 * As carts.ts's group commit of new carts (a second statement for a full batch only), for the protocol creates: as
 * many per statement as it can bind answers for.
 */
const MAX_STORES_IN_FLIGHT = 2;
const createStore = batchedPerDatabase<ProtocolCreateToStore, ProtocolCreateStored>('protocol_create_store', (db) => ({
  one: async (item) => (await storeMany(db, [item]))[0]!,
  many: (batch) => storeMany(db, batch),
  maxBatch: MAX_ANSWERS_PER_STATEMENT,
  maxInFlight: MAX_STORES_IN_FLIGHT,
  eagerInFlight: 1,
}));

/**
 * Stores a create's answer under its key with the session it reports (if any), in one statement: the session only if
 * the key took the answer (and, priced from an earlier read, only if the catalogue is still at that read's version).
 * When it did not, nothing is stored, and the outcome carries the key's record if the statement saw one. Concurrent
 * creates share a statement and a commit (group commit, src/db/batching.ts); a batch that fails is retried item by
 * item, so each gets the outcome and the error it would get alone.
 */
export function storeProtocolCreate(db: Db, item: ProtocolCreateToStore): Promise<ProtocolCreateStored> {
  return createStore(db)(item);
}
