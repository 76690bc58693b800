// A policy per surface: how its keys are scoped, what fingerprints a request, how long an answer is kept, and what is
// stored. The REST and MCP checkout keys and the ACP/UCP keys keep their own tables and hashes, so records stored by
// earlier releases still answer their keys.
import { createHash } from 'node:crypto';
import type { RetentionConfig } from '../../config.js';
import type { IdempotencyRecord, KeyAnswer } from '../../db/repositories/idempotency.js';
import {
  findRecord,
  storeAnswer,
  type ProtocolAnswer,
  type StoredAnswer,
} from '../../db/repositories/protocol-idempotency.js';
import { canonicalize, sortedKeysJson } from '../../domain/canonical-json.js';
import { isFinalAnswer, type ProtocolResponse } from '../../protocols/answers.js';
import type { KeyRecordState } from './decide.js';

/** A key taken by an answer: stored with it, and kept until `expiresAt`. */
export interface KeyClaim {
  scope: string;
  key: string;
  requestHash: string;
  /** When the request stored its answer: its record's creation time. */
  createdAt: Date;
  expiresAt: Date;
  /** The creation time of the stale record the request read and takes over, or null when it read none. */
  replaces: string | null;
}

/** How one surface's keys behave; `Answer` is what the surface's requests are answered with, `Stored` its record. */
export interface KeyPolicy<Answer, Record extends KeyRecordState, Stored> {
  /** What makes two requests under one key the same request: a hash of the parsed body. */
  fingerprint(body: unknown): string;
  retentionMs(retention: RetentionConfig): number;
  /** The scope as the records are keyed by it. */
  storedScope(scope: string): string;
  /** Whether an answer is kept under its key (one that is not leaves the key free). */
  keeps(answer: Answer): boolean;
  /** The answer a replay gives, from its record. */
  replayOf(record: Record): Answer;
  /** The record that keeps an answer under the key it claims. */
  toStore(claim: KeyClaim, answer: Answer): Stored;
}

/** SHA-256 over the parsed body (an absent one: null) with object keys sorted; the checkout keys' fingerprint. */
export function sortedKeysHash(body: unknown): string {
  return createHash('sha256')
    .update(sortedKeysJson(body ?? null))
    .digest('hex');
}

/**
 * SHA-256 over the RFC 8785 (JCS) form of the parsed body (an absent one: `{}`), so key order and `1.0` vs `1` do not
 * matter while `null` vs absent and array order do; the protocols' fingerprint.
 */
export function jcsHash(body: unknown): string {
  return createHash('sha256')
    .update(canonicalize(body ?? {}) ?? '{}')
    .digest('hex');
}

/**
 * A request body fingerprinted by its exact bytes rather than its JSON (UCP 2026-08-25: the fingerprint is the SHA-256
 * of the raw body, so a same-key request with other bytes, even equal JSON, is a conflict).
 */
export class RawBody {
  constructor(readonly bytes: Buffer) {}
}

/** SHA-256 over the exact bytes of a body. */
export function rawBodyHash(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The protocols' fingerprint: a RawBody's bytes (UCP 2026-08-25), any other body as RFC 8785 JSON (jcsHash). */
export function protocolFingerprint(body: unknown): string {
  return body instanceof RawBody ? rawBodyHash(body.bytes) : jcsHash(body);
}

/** A checkout key's answer: the session created, and the API version it was first given under (a replay keeps it). */
export interface CheckoutKeyAnswer {
  body: unknown;
  apiVersion: string;
}

/** What the checkout keys' `status_code` column holds: every answer they keep is a created session. */
const CHECKOUT_STORED_STATUS = 201;

/**
 * REST and MCP checkout creates (table idempotency_keys): one key space, so a key used over REST replays over MCP and
 * the other way round; kept RETENTION_IDEMPOTENCY_SECONDS (24 h by default); only created sessions are stored.
 */
export const checkoutKeys = {
  scope: 'createCheckoutSession',
  fingerprint: sortedKeysHash,
  retentionMs: (retention) => retention.idempotencyMs,
  storedScope: (scope) => scope,
  keeps: () => true,
  replayOf: (record) => ({ body: record.response_body, apiVersion: record.api_version! }),
  // The claim spread last (it has none of these fields): on Node 20 a literal that starts with a spread takes a
  // runtime call for each property after it (src/domain/pricing.ts).
  toStore: (claim, answer) => ({
    status: CHECKOUT_STORED_STATUS,
    body: answer.body,
    apiVersion: answer.apiVersion,
    ...claim,
  }),
} satisfies KeyPolicy<CheckoutKeyAnswer, IdempotencyRecord, KeyAnswer> & { scope: string };

/** 48 h: ACP asks for at least 24 h, UCP recommends 48 h. */
export const PROTOCOL_IDEMPOTENCY_RETENTION_MS = 48 * 60 * 60 * 1000;

/**
 * The longest scope stored as it is (UTF-8 bytes). A scope names the caller and the operation, and both come from the
 * request (a UCP profile URL, an ACP path): past PostgreSQL's btree row limit (about 2.7 kB for the primary key's scope
 * and key together) its insert failed. Longer ones are stored as their SHA-256; shorter ones as before, so records
 * stored by earlier releases still answer their keys. With a key of at most 255 characters (510 bytes), 2 KiB keeps
 * the pair under the limit.
 */
export const MAX_STORED_SCOPE_BYTES = 2048;

/** The scope as its records are keyed: itself, or when longer than MAX_STORED_SCOPE_BYTES its SHA-256. */
export function storedScope(scope: string): string {
  if (Buffer.byteLength(scope) <= MAX_STORED_SCOPE_BYTES) return scope;
  // Every scope as sent starts with its protocol and `|`, so this form cannot be a scope stored as it is.
  return `sha256:${createHash('sha256').update(scope).digest('hex')}`;
}

/**
 * ACP, UCP and UCP over MCP (table protocol_idempotency): a scope per protocol, caller and operation; kept 48 h; every
 * final answer kept as the exact bytes and headers sent, so a replay is byte-identical.
 */
export const protocolKeys = {
  scope: {
    acp: (clientId: string, path: string) => `acp|${clientId}|POST ${path}`,
    ucp: (profileUrl: string, method: string, path: string) => `ucp|${profileUrl}|${method} ${path}`,
    ucpMcp: (profileUrl: string, tool: string, id: string | undefined) => `ucp-mcp|${profileUrl}|${tool} ${id ?? ''}`,
  },
  fingerprint: protocolFingerprint,
  retentionMs: () => PROTOCOL_IDEMPOTENCY_RETENTION_MS,
  storedScope,
  keeps: isFinalAnswer,
  replayOf: (record) => ({
    status: record.status_code!,
    body: record.response_body!,
    headers: record.response_headers ?? {},
  }),
  toStore: (claim, response) => ({ response, ...claim }),
  /** Where claim-first operations read a key's record and store their answer (in their transaction). */
  records: { find: findRecord, store: storeAnswer },
} satisfies KeyPolicy<ProtocolResponse, StoredAnswer, ProtocolAnswer> & { scope: unknown; records: unknown };

/**
 * The merchant's changes under `/admin` (table protocol_idempotency, beside the protocols' keys): a scope per client,
 * operation and target; kept 48 h; only an answer the change gave is kept (a refusal throws, stores nothing, and
 * leaves the key free).
 */
export const adminKeys = {
  scope: (clientId: string, operation: string, target: string) => `admin|${clientId}|${operation} ${target}`,
  fingerprint: jcsHash,
  retentionMs: () => PROTOCOL_IDEMPOTENCY_RETENTION_MS,
  storedScope,
  keeps: isFinalAnswer,
  replayOf: protocolKeys.replayOf,
  toStore: (claim, response) => ({ response, ...claim }),
  records: { find: findRecord, store: storeAnswer },
} satisfies KeyPolicy<ProtocolResponse, StoredAnswer, ProtocolAnswer> & { scope: unknown; records: unknown };
