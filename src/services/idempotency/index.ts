// Idempotency-Key handling for every surface: one decision (decide.ts), two strategies (strategies.ts) and a policy
// per surface (policies.ts). Same key and same request replay the first answer; same key and another request is a
// conflict; a key held by an earlier release's in-flight record is in flight. Each surface renders those outcomes.
export * from './decide.js';
export * from './policies.js';
export * from './strategies.js';
