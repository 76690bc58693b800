// Property-based tests explore new inputs on every local run; CI replays a fixed seed so that a landing does not
// depend on luck. FC_SEED=<n> reproduces any run (fast-check prints the seed of a failure).
import fc from 'fast-check';

const seed = process.env.FC_SEED ? Number(process.env.FC_SEED) : process.env.CI ? 20_261_121 : undefined;
if (seed !== undefined) fc.configureGlobal({ seed });
