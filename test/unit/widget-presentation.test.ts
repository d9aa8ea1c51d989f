// The widget's presentation pieces: its zod-free presentation check agrees with the wire schema, every bundled
// translation covers every English string with its placeholders, and locale and string layering follow the documented
// precedence.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { presentationSchema } from "../../src/shared/presentation";
import { ATTACH_STRINGS } from "../../src/widget/attach-strings";
import de from "../../src/widget/locales/de.json";
import es from "../../src/widget/locales/es.json";
import fr from "../../src/widget/locales/fr.json";
import ja from "../../src/widget/locales/ja.json";
import pt from "../../src/widget/locales/pt.json";
import { accentCss, isPresentation, pickLocale } from "../../src/widget/presentation-rules";
import { DEFAULT_STRINGS, layerOnto, layerStrings } from "../../src/widget/strings";

const BUNDLES: Record<string, Record<string, string>> = { de, es, fr, ja, pt };

const FULL = {
  title: "Acme",
  greeting: "Hola",
  suggestedPrompts: ["Track my order", ""],
  theme: "dark",
  accentColor: "#0F766e",
  position: "bottom-left",
  strings: { send: "Go" },
  locale: "pt-BR",
  attachments: { accept: ["image/png", "application/pdf"], maxBytes: 10485760, maxFiles: 4 },
};

describe("isPresentation", () => {
  it("agrees with presentationSchema on valid, broken and arbitrary values", () => {
    const cases: unknown[] = [
      {},
      FULL,
      { ...FULL, theme: "sepia" },
      { ...FULL, accentColor: "red" },
      { ...FULL, accentColor: "#0f766e;}" },
      { ...FULL, position: "top" },
      { ...FULL, suggestedPrompts: [1] },
      { ...FULL, strings: { send: 1 } },
      { ...FULL, strings: [] },
      { ...FULL, locale: "English" },
      { ...FULL, title: null },
      { ...FULL, attachments: { accept: ["image/png"], maxBytes: "1", maxFiles: 4 } },
      { ...FULL, attachments: { accept: [1], maxBytes: 1, maxFiles: 4 } },
      { ...FULL, attachments: { accept: [], maxBytes: 1.5, maxFiles: 4 } },
      { ...FULL, attachments: { accept: [], maxBytes: 1 } },
      [],
      null,
    ];
    for (const value of cases) {
      expect(isPresentation(value), JSON.stringify(value)).toBe(presentationSchema.safeParse(value).success);
    }
    const anyValue = fc.oneof(
      fc.jsonValue(),
      fc.constantFrom("dark", "bottom-left", "#123456", "es", "es_ES", ["a"], { a: "b" }, { a: 1 }),
    );
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(FULL)), anyValue, (key, value) => {
        const candidate = { ...FULL, [key]: value };
        expect(isPresentation(candidate)).toBe(presentationSchema.safeParse(candidate).success);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("bundled translations", () => {
  // The attachments module's texts (./attach-strings.ts) are translated in the same files.
  const english = Object.entries({ ...DEFAULT_STRINGS, ...ATTACH_STRINGS }).filter(([, text]) => text !== "");

  for (const [tag, bundle] of Object.entries(BUNDLES)) {
    it(`${tag} translates every English string, keeping its placeholders`, () => {
      for (const [key, text] of english) {
        const translated = bundle[key];
        expect(translated, `${tag}.${key}`).toBeTypeOf("string");
        expect(translated?.trim(), `${tag}.${key}`).not.toBe("");
        const placeholders = (s: string) => (s.match(/\{\w+\}/g) ?? []).sort();
        expect(placeholders(translated ?? ""), `${tag}.${key}`).toEqual(placeholders(text));
      }
      for (const key of Object.keys(bundle))
        expect(Object.keys({ ...DEFAULT_STRINGS, ...ATTACH_STRINGS }), tag).toContain(key);
      // The attachments module's "Try again" is the first screen's.
      expect(layerOnto(ATTACH_STRINGS, [bundle]).retry).toBe(bundle.retry);
      // Two states that show the same English text show the same translation (labels are swapped by text).
      expect(bundle.paused).toBe(bundle.online);
    });
  }

  it("are real translations, not English copies", () => {
    for (const [tag, bundle] of Object.entries(BUNDLES)) {
      const same = english.filter(([key, text]) => bundle[key] === text).map(([key]) => key);
      expect(same.length, `${tag}: ${same.join(", ")}`).toBeLessThanOrEqual(4);
    }
  });
});

describe("locale choice", () => {
  const bundled = ["de", "es", "fr", "ja", "pt"];

  it("takes the first candidate it can speak, by full tag or language", () => {
    expect(pickLocale(["fr", "es", "de"], bundled)).toBe("fr");
    expect(pickLocale([null, "pt-BR"], bundled)).toBe("pt");
    expect(pickLocale([undefined, undefined, "es-ES", "en-US"], bundled)).toBe("es");
    expect(pickLocale(["ru", "ja-JP"], bundled)).toBe("ja");
    expect(pickLocale(["en-GB", "es"], bundled)).toBe("en");
    expect(pickLocale(["ru", "zh-CN"], bundled)).toBe("en");
    expect(pickLocale([], bundled)).toBe("en");
    expect(pickLocale(["ES"], bundled)).toBe("es");
  });
});

describe("string layers", () => {
  it("let the translation, then the agent, then the host win, and keep English where a layer is silent", () => {
    const s = layerStrings(es, { greeting: "¡Bienvenido a Acme!", send: "Mandar" }, '{"send":"Enviar ya"}');
    expect(s.greeting).toBe("¡Bienvenido a Acme!");
    expect(s.send).toBe("Enviar ya");
    expect(s.placeholder).toBe(es.placeholder);
    const partial = layerStrings({ open: "Abrir" });
    expect(partial.close).toBe(DEFAULT_STRINGS.close);
    expect(layerStrings(null, "{broken", 5)).toEqual(DEFAULT_STRINGS);
  });
});

describe("accent colour", () => {
  it("picks readable text on the accent and refuses anything but #rrggbb", () => {
    expect(accentCss("#0f766e")).toBe(":host{--at-accent:#0f766e;--at-accent-fg:#fff}");
    expect(accentCss("#fde047")).toContain("--at-accent-fg:#111827");
    expect(accentCss("#fde047")).toContain("--at-link:var(--at-fg)");
    expect(accentCss("#fff;}body{x:y")).toBe("");
    expect(accentCss("red")).toBe("");
  });
});
