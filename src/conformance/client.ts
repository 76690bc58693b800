// The runner's HTTP client: every request has a timeout, every answer is kept whole (status, headers, text, parsed
// body) so a failed check can say what it got, and the answers are counted for the summary.

/** How long one request may take before the check that sent it fails (the merchant is not answering). */
export const REQUEST_TIMEOUT_MS = 15_000;

export type Json = any;

export interface Answer {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body; undefined when the body is empty or not JSON. */
  body: Json;
}

/** `<status> <first bytes of the body>`, for "expected …, got …" lines. */
export function describeAnswer(answer: Answer | undefined): string {
  if (!answer) return 'no answer';
  const text = answer.text.replace(/\s+/g, ' ').trim();
  const first = text.length > 160 ? `${text.slice(0, 160)}…` : text;
  return `${answer.status} ${first || '(empty body)'}`;
}

export class HttpClient {
  responses = 0;

  constructor(private readonly timeoutMs = REQUEST_TIMEOUT_MS) {}

  async request(url: string, init: RequestInit = {}): Promise<Answer> {
    const method = init.method ?? 'GET';
    let response: Response | undefined;
    let text = '';
    // One retry when the connection failed (not on a timeout): a server closing an idle keep-alive socket just as it
    // is reused is not the merchant's answer. Retrying is safe: the runner's POSTs carry an Idempotency-Key.
    for (let attempt = 1; !response; attempt += 1) {
      try {
        response = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(this.timeoutMs) });
        text = await response.text();
      } catch (error) {
        const timedOut = error instanceof Error && error.name === 'TimeoutError';
        response = undefined;
        if (timedOut || attempt === 2) {
          const reason = timedOut ? `no answer in ${this.timeoutMs} ms` : String((error as Error)?.cause ?? error);
          throw new UnreachableError(`${method} ${url}: ${reason}`);
        }
      }
    }
    this.responses += 1;
    return { method, url, status: response.status, headers: response.headers, text, body: parseJson(text) };
  }
}

/** The merchant did not answer (connection refused, DNS, timeout): the check fails with this, never the run. */
export class UnreachableError extends Error {}

export function parseJson(text: string): Json {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
