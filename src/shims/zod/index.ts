// What `zod` and `zod/v4` resolve to in the Worker bundle (wrangler.toml `alias`): the same API, minus the
// `locales` namespace, which `import { z } from "zod"` would otherwise pull in whole. English messages stay built in.
import * as z from "./external";

export * from "./external";
export { z, z as default };
