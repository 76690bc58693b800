// The group commit's mechanics with a stand-in for the database: a lone write goes at once, later writes queue
// while statements run and go together, batches are capped, a failed batch is retried member by member, a shared
// failure is not, each member gets its own result, and a queued write's wait is bounded.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { groupCommit, GroupCommitTimeout, type GroupCommitOptions } from '../../src/db/group-commit.js';

interface Statement {
  items: string[];
  finish(error?: unknown): void;
}

/**
 * A database whose statements end when the test says so; `statements` lists them in the order they were sent. A
 * statement that ends well answers `<item> stored` for each of its items.
 */
function fakeDatabase(options: Partial<GroupCommitOptions<string, string>> = {}) {
  const statements: Statement[] = [];
  const send = (items: string[]) =>
    new Promise<string[]>((resolve, reject) => {
      statements.push({
        items,
        finish: (error) => (error === undefined ? resolve(items.map((item) => `${item} stored`)) : reject(error)),
      });
    });
  const store = groupCommit<string, string>({
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
  return Promise.all(stores.map((stored) => stored.catch((error: Error) => error.message)));
}

afterEach(() => {
  vi.useRealTimers();
});

describe('group commit', () => {
  it('sends a lone write at once, in a statement of its own', async () => {
    const { statements, store } = fakeDatabase();
    const stored = store('a');
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a']]);
    statements[0]!.finish();
    await expect(stored).resolves.toBe('a stored');
  });

  it('queues writes while a statement runs and sends them together when it ends, each answered with its own result after its commit', async () => {
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
    expect(await outcomes([first, ...later])).toEqual(['a stored', 'b stored', 'c stored', 'd stored']);
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

  it('puts at most maxBatch writes in one statement', async () => {
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
    expect(await outcomes(batch)).toEqual(['b stored', 'c violates a foreign key', 'd stored']);
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

  it('gives up on a write that waited in the queue too long, and never sends it', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const { statements, store } = fakeDatabase({ queueTimeoutMs: 2_000 });
    const first = store('a');
    await settle();
    let failure: unknown;
    store('b').catch((error: unknown) => (failure = error));
    vi.advanceTimersByTime(2_000);
    await settle();
    expect(failure).toBeInstanceOf(GroupCommitTimeout);
    statements[0]!.finish();
    await first;
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a']]);
    // The slot was handed on: the next write goes at once.
    store('c');
    await settle();
    expect(statements.map((statement) => statement.items)).toEqual([['a'], ['c']]);
  });
});
