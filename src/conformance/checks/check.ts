// What a check is, and how it fails or skips: a failure says what the specification expects and what the merchant
// answered (`expected …, got <status> <first bytes>`), a skip says why the check could not run.
import { describeAnswer, type Answer } from '../client.js';

export type Outcome = 'pass' | 'fail' | 'skip';

export interface Check<Context> {
  /** Stable id, e.g. `ucp.checkout.create` (with the transport appended by the runner). */
  id: string;
  title: string;
  /** The specification section the check comes from. */
  spec: string;
  run(context: Context): Promise<void>;
}

export class CheckFailure extends Error {}
export class CheckSkipped extends Error {}

/** Fails the check unless `condition`: `expected <expected>, got <status> <first bytes>`. */
export function expectThat(condition: unknown, expected: string, answer?: Answer, detail?: string): asserts condition {
  if (condition) return;
  const got = answer ? `${describeAnswer(answer)}${detail ? ` (${detail})` : ''}` : (detail ?? 'something else');
  throw new CheckFailure(`expected ${expected}, got ${got}`);
}

export function skip(reason: string): never {
  throw new CheckSkipped(reason);
}
