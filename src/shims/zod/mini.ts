// What `zod/mini` and `zod/v4/mini` resolve to in the Worker bundle: the same API, minus the `locales` namespace.
import * as z from "./mini-external";

export * from "./mini-external";
export { z };
