// Types of codegen/build-docs.mjs for the test setup that calls it.
export const docsOutput: string;
export const docsInputs: string[];
export function buildDocs(): void;
