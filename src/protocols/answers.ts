// A protocol binding's answer as rendered for the wire. Services never build or read one: a binding renders an
// operation's outcome into it, and the idempotency module keeps it under the request's key as it is.

/** A finished answer: its status, the exact body bytes, and the headers that belong to it. */
export interface ProtocolResponse {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** Whether an answer is final, so kept under its key: a 5xx says nothing was done, and a retry must run again. */
export function isFinalAnswer(response: ProtocolResponse): boolean {
  return response.status < 500;
}
