// Statement batching: concurrent statements of the same kind coalesced into one (the group commit of new carts, the
// batched session read). DataLoader does the batching (a batch stays open, collecting items, until it is dispatched or
// full); the schedule below dispatches a batch at once while fewer than `eagerInFlight` batch statements run, a full
// batch also while fewer than `maxInFlight` run, and otherwise when one of them ends. So a lone item goes at once (one
// microtask later), and under load each statement carries everything that queued meanwhile. Its cache is off: every
// item is sent in a statement that starts after the item arrived, so it sees every write committed before.
import DataLoader from 'dataloader';

/** An item still queued when its wait ran out: the database is too slow to take it (answered as unavailable). */
export class BatchQueueTimeout extends Error {
  override name = 'BatchQueueTimeout';
  constructor(waitedMs: number) {
    super(`Timeout waiting ${waitedMs} ms for a batch statement`);
  }
}

export interface BatchingOptions<Item, Result> {
  /** Runs one item in its own statement: a lone item, and each member of a batch that failed. */
  one(item: Item): Promise<Result>;
  /** Runs every item in one statement, all or none; answers each item's result, in the items' order. */
  many(items: Item[]): Promise<Result[]>;
  /** The most items one statement carries. */
  maxBatch: number;
  /** How many statements may run at once; further items queue for the next one. */
  maxInFlight: number;
  /**
   * How many statements may run before a further one waits for a full batch (default maxInFlight). Below it a batch
   * goes at once however few items it holds; from it up to maxInFlight only a full batch goes. A fast database then
   * gets fewer, larger statements (less of its CPU per item), and a slow one (a long commit) still gets more than one
   * statement's worth of items at a time.
   */
  eagerInFlight?: number;
  /** How long an item may wait in the queue (the statement itself has the database's own timeouts). */
  queueTimeoutMs: number;
  /** A failure that is no member's own (the database unreachable or timing out): every member gets it, no retry. */
  sharedFailure(error: unknown): boolean;
  /** Told how many items each statement sent carries (metrics: rows per group commit), when set. */
  onBatch?: (items: number) => void;
}

interface Entry<Item> {
  item: Item;
  /** Set while the item waits; cleared when it is sent or when its wait ran out. */
  timer: NodeJS.Timeout | undefined;
}

interface WaitingBatch {
  dispatch(): void;
  items: number;
}

type Outcome<Result> = { result: Result } | { error: Error };

/**
 * A function that runs an item and resolves with its result once the statement that carried it has ended. A batch
 * that fails is retried member by member with `one`, so each member gets exactly the outcome (and error) it would get
 * alone.
 */
export function batchedStatements<Item, Result>(
  options: BatchingOptions<Item, Result>,
): (item: Item) => Promise<Result> {
  const eagerInFlight = options.eagerInFlight ?? options.maxInFlight;
  let inFlight = 0;
  // Batches waiting for a statement, oldest first, each with the number of items it holds so far. Only the newest one
  // takes items: every other is full.
  const waiting: WaitingBatch[] = [];
  let newest: WaitingBatch | undefined;
  // Starts the oldest waiting batches that may go: any while fewer than eagerInFlight statements run, a full one while
  // fewer than maxInFlight run.
  const dispatchWaiting = () => {
    for (let next = waiting[0]; next !== undefined; next = waiting[0]) {
      const mayGo = inFlight < eagerInFlight || (inFlight < options.maxInFlight && next.items === options.maxBatch);
      if (!mayGo) return;
      waiting.shift();
      inFlight++;
      queueMicrotask(next.dispatch);
    }
  };
  // A finished statement hands its slot on.
  const release = () => {
    inFlight--;
    dispatchWaiting();
  };

  async function run(entries: readonly Entry<Item>[]): Promise<Array<Result | Error>> {
    const live = entries.filter((entry) => entry.timer !== undefined);
    for (const entry of live) {
      clearTimeout(entry.timer);
      entry.timer = undefined;
    }
    if (live.length > 0) options.onBatch?.(live.length);
    const outcomes = new Map<Entry<Item>, Outcome<Result>>();
    const alone = (entry: Entry<Item>) =>
      options.one(entry.item).then(
        (result) => outcomes.set(entry, { result }),
        (error: unknown) => outcomes.set(entry, { error: asError(error) }),
      );
    if (live.length === 1) await alone(live[0]!);
    else if (live.length > 1) {
      try {
        const results = await options.many(live.map((entry) => entry.item));
        live.forEach((entry, index) => outcomes.set(entry, { result: results[index]! }));
      } catch (error) {
        if (options.sharedFailure(error)) for (const entry of live) outcomes.set(entry, { error: asError(error) });
        else await Promise.all(live.map(alone));
      }
    }
    // An entry whose wait ran out was already rejected: whatever is returned for it is ignored.
    return entries.map((entry) => {
      const outcome = outcomes.get(entry);
      return outcome === undefined
        ? new BatchQueueTimeout(options.queueTimeoutMs)
        : 'error' in outcome
          ? outcome.error
          : outcome.result;
    });
  }

  const loader = new DataLoader<Entry<Item>, Result>(
    async (entries) => {
      try {
        return await run(entries);
      } finally {
        release();
      }
    },
    {
      cache: false,
      maxBatchSize: options.maxBatch,
      // Called when a batch opens, before its first item joins: dispatching is always deferred at least a microtask.
      batchScheduleFn: (dispatch) => {
        newest = { dispatch, items: 0 };
        waiting.push(newest);
        dispatchWaiting();
      },
    },
  );

  return (item) =>
    new Promise<Result>((resolve, reject) => {
      const entry: Entry<Item> = {
        item,
        timer: setTimeout(() => {
          entry.timer = undefined;
          reject(new BatchQueueTimeout(options.queueTimeoutMs));
        }, options.queueTimeoutMs),
      };
      entry.timer!.unref();
      loader.load(entry).then(resolve, reject);
      // load() put the entry in the newest batch (opening it, and scheduling it above, when the last one was full or
      // already sent).
      if (newest && ++newest.items === options.maxBatch) dispatchWaiting();
    });
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
