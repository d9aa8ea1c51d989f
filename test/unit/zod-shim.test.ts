// The Worker bundle resolves zod through src/shims/zod (wrangler.toml `alias`): the same API minus `locales`.
import { describe, expect, it } from "vitest";
import * as realZod from "../../node_modules/zod/index.js";
import * as realCore from "../../node_modules/zod/v4/core/index.js";
import * as realMini from "../../node_modules/zod/v4/mini/index.js";
import * as shimCore from "../../src/shims/zod/core";
import * as shimZod from "../../src/shims/zod/index";
import * as shimMini from "../../src/shims/zod/mini";

const names = (module: object, drop: string[] = []) =>
  Object.keys(module)
    .filter((name) => !drop.includes(name))
    .sort();

describe("the bundle's zod without locales", () => {
  it("exports every name zod does, but the locales", () => {
    expect(names(shimZod)).toEqual(names(realZod, ["locales"]));
    expect(names(shimZod.z)).toEqual(names(realZod.z, ["locales"]));
    expect(names(shimZod.z.core)).toEqual(names(realZod.z.core, ["locales"]));
    expect(names(shimCore)).toEqual(names(realCore, ["locales"]));
    expect(names(shimMini)).toEqual(names(realMini, ["locales"]));
    expect(names(shimMini.z)).toEqual(names(realMini.z, ["locales"]));
    expect("locales" in shimZod.z).toBe(false);
  });

  it("is zod itself: the same classes, and English messages", () => {
    expect(shimZod.z.ZodObject).toBe(realZod.z.ZodObject);
    const result = shimZod.z.object({ name: shimZod.z.string() }).safeParse({ name: 1 });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe("Invalid input: expected string, received number");
  });
});
