// Types of d1-bindings.mjs for the TypeScript tests that import it.
export const D1_BINDINGS: string[];
