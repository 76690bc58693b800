// Statement batching's mechanics (the group commit of creates, the batched session read) with a stand-in for the
// database: a lone item goes at once, later items queue while statements run and go together, each answered with its
// own result, batches are capped, statements beyond the eager ones carry full batches only, a failed batch is retried
// member by member, a shared failure is not, and a queued item's wait is bounded.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { batchedStatements, BatchQueueTimeout, type BatchingOptions } from '../../src/db/batching.js';

interface Statement {
  items: string[];
  finish(error?: unknown): void;
}

/**
 * A database whose statements end when the test says so, each item's result being its own text in capitals;
 * `statements` lists them in the order they were sent.
 */
function fakeDatabase(options: Partial<BatchingOptions<string, string>> = {}) {
  const statements: Statement[] = [];
  const send = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      statements.push({
        items,
        finish: (error) => (error === undefined ? resolve(items.map((item) => item.toUpperCase())) : reject(error)),
      });
    });
  const store = batchedStatements<string, string>({
    one: async (item) => (await send([item]))[0]!,
    many: (items) => send(items),
    maxBatch: 10,
    maxInFlight: 1,
    queueTimeoutMs: 60_000,
    sharedFailure: (error) => error instanceof Unreachable,
    ...options,
  });
  return { statements, store };
}

class Unreachable extends Error {}

/** Lets queued microtasks and promise callbacks run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** Each item's outcome: its result, or the message of the error it got. */
function outcomes(stores: Array<Promise<string>>): Promise<string[]> {
  return Promise.all(
    stores.map((stored) =>
      stored.then(
        (result) => result,
        (error: Error) => error.message,
      ),
    ),
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe('statement batching', () => {
  it('sends a lone item at once, in a statement of its own', async () => {
    const { statements, store } = fakeDatabase();
    const stored = store('a');
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a']]);
    statements[0]!.finish();
    await expect(stored).resolves.toBe('A');
  });

  it('queues items while a statement runs and sends them together when it ends, each answered with its own result once it ended', async () => {
    const { statements, store } = fakeDatabase();
    const first = store('a');
    await settle();
    const later = ['b', 'c', 'd'].map(store);
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a']]);
    let answered = false;
    void Promise.all(later).then(() => (answered = true));
    statements[0]!.finish();
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['b', 'c', 'd']]);
    expect(answered).toBe(false);
    statements[1]!.finish();
    expect(await outcomes([first, ...later])).toEqual(['A', 'B', 'C', 'D']);
  });

  it('runs up to maxInFlight statements at once', async () => {
    const { statements, store } = fakeDatabase({ maxInFlight: 2 });
    store('a');
    await settle();
    store('b');
    await settle();
    store('c');
    store('d');
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['b']]);
    statements[1]!.finish();
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['b'], ['c', 'd']]);
  });

  it('starts a statement beyond eagerInFlight only for a full batch, up to maxInFlight', async () => {
    const { statements, store } = fakeDatabase({ maxBatch: 3, maxInFlight: 2, eagerInFlight: 1 });
    store('a');
    await settle();
    // One statement runs: a batch that is not full waits for it, however long.
    store('b');
    store('c');
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a']]);
    // Full now: it takes the second slot at once. The next batch waits again, for either statement.
    store('d');
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['b', 'c', 'd']]);
    store('e');
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['b', 'c', 'd']]);
    statements[1]!.finish();
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['b', 'c', 'd']]);
    statements[0]!.finish();
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['b', 'c', 'd'], ['e']]);
  });

  it('never runs more than maxInFlight statements, full batches included', async () => {
    const { statements, store } = fakeDatabase({ maxBatch: 2, maxInFlight: 2, eagerInFlight: 1 });
    const all = ['a', 'b', 'c', 'd', 'e', 'f', 'g'].map(store);
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
    ]);
    statements[0]!.finish();
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([
      ['a', 'b'],
      ['c', 'd'],
      ['e', 'f'],
    ]);
    statements[1]!.finish();
    await settle();
    // One statement still runs: the last item, alone in its batch, waits for it.
    expect(statements).toHaveLength(3);
    statements[2]!.finish();
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a', 'b'], ['c', 'd'], ['e', 'f'], ['g']]);
    statements[3]!.finish();
    expect(await outcomes(all)).toEqual(['A', 'B', 'C', 'D', 'E', 'F', 'G']);
  });

  it('puts at most maxBatch items in one statement', async () => {
    const { statements, store } = fakeDatabase({ maxBatch: 3 });
    store('a');
    await settle();
    ['b', 'c', 'd', 'e', 'f', 'g', 'h'].map(store);
    await settle();
    for (let sent = 1; sent < 4; sent++) {
      statements[sent - 1]!.finish();
      await settle();
    }
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['b', 'c', 'd'], ['e', 'f', 'g'], ['h']]);
  });

  it("retries a failed batch member by member, so one member's error fails that member only", async () => {
    const { statements, store } = fakeDatabase();
    store('a');
    await settle();
    const batch = ['b', 'c', 'd'].map(store);
    statements[0]!.finish();
    await settle();
    statements[1]!.finish(new Error('c violates a foreign key'));
    await settle();
    expect(statements.slice(2).map((statement) => statement.items)).toEqual([['b'], ['c'], ['d']]);
    statements[2]!.finish();
    statements[3]!.finish(new Error('c violates a foreign key'));
    statements[4]!.finish();
    expect(await outcomes(batch)).toEqual(['B', 'c violates a foreign key', 'D']);
  });

  it('fails every member of a batch with a shared failure (the database unreachable), without retrying them', async () => {
    const { statements, store } = fakeDatabase();
    store('a');
    await settle();
    // Outcomes are collected before the batch fails, so its rejections are handled when they happen.
    const batch = outcomes(['b', 'c'].map(store));
    statements[0]!.finish();
    await settle();
    statements[1]!.finish(new Unreachable('connection refused'));
    await settle();
    expect(statements).toHaveLength(2);
    expect(await batch).toEqual(['connection refused', 'connection refused']);
  });

  it('gives up on an item that waited in the queue too long, and never sends it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { statements, store } = fakeDatabase({ queueTimeoutMs: 2_000 });
    const first = store('a');
    await settle();
    let failure: unknown;
    store('b').catch((error: unknown) => (failure = error));
    vi.advanceTimersByTime(2_000);
    await settle();
    expect(failure).toBeInstanceOf(BatchQueueTimeout);
    statements[0]!.finish();
    await first;
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a']]);
    // The slot was handed on: the next item goes at once.
    store('c');
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['c']]);
  });
});
