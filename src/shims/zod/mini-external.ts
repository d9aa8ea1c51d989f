// zod/mini without its `locales` namespace: bundling only, see wrangler.toml.

export { toJSONSchema } from "../../../node_modules/zod/v4/core/json-schema-processors.js";
export * from "../../../node_modules/zod/v4/mini/checks.js";
export * as coerce from "../../../node_modules/zod/v4/mini/coerce.js";
export { deepPartial } from "../../../node_modules/zod/v4/mini/deep-partial.js";
export { input, output } from "../../../node_modules/zod/v4/mini/in-out.js";
export * as iso from "../../../node_modules/zod/v4/mini/iso.js";
export {
  ZodMiniISODate,
  ZodMiniISODateTime,
  ZodMiniISODuration,
  ZodMiniISOTime,
} from "../../../node_modules/zod/v4/mini/iso.js";
export * from "../../../node_modules/zod/v4/mini/parse.js";
export * from "../../../node_modules/zod/v4/mini/schemas.js";
export * as core from "./core";
export {
  $brand,
  $input,
  $output,
  clone,
  compile,
  config,
  flattenError,
  formatError,
  getDiscriminatedOption,
  globalRegistry,
  INVALID,
  memoizer,
  NEVER,
  prettifyError,
  regexes,
  registry,
  TimePrecision,
  toZod,
  treeifyError,
  util,
  withParser,
  ZodCompileAsyncError,
  ZodCompileUnsupportedError,
} from "./core";
