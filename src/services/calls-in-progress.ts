// The process's calls in progress by key (src/ports.ts CallsInProgress), built once by src/service.ts: concurrent
// callers of one key wait for one call, which is forgotten once it settles (its outcome is never kept).
import type { CallsInProgress } from '../ports.js';

export function createCallsInProgress(): CallsInProgress {
  const running = new Map<string, Promise<unknown>>();
  return {
    share<T>(key: string, start: () => Promise<T>): Promise<T> {
      let call = running.get(key) as Promise<T> | undefined;
      if (!call) {
        call = start().finally(() => running.delete(key));
        running.set(key, call);
      }
      return call;
    },
  };
}
