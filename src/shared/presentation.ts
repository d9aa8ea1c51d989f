// How an agent presents itself in the widget (docs/protocol.md): sent in the launch response and the `ready` frame.
import { z } from "zod";

export const THEMES = ["light", "dark", "auto"] as const;
export const POSITIONS = ["bottom-right", "bottom-left"] as const;
/** Six hex digits only: the widget writes the colour into a stylesheet, so nothing else may get there. */
export const ACCENT_COLOR_PATTERN = /^#[0-9a-fA-F]{6}$/;
/** A BCP 47 language tag as the widget uses it: a 2-3 letter language, then subtags (`pt-BR`, `zh-Hant-TW`). */
export const LOCALE_PATTERN = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;

/** Every field is optional: only what the pinned artifact sets is sent. */
export const presentationSchema = z.object({
  title: z.string().optional(),
  /** With the thread's context variables already filled in. */
  greeting: z.string().optional(),
  suggestedPrompts: z.array(z.string()).optional(),
  theme: z.enum(THEMES).optional(),
  accentColor: z.string().regex(ACCENT_COLOR_PATTERN).optional(),
  position: z.enum(POSITIONS).optional(),
  strings: z.record(z.string(), z.string()).optional(),
  locale: z.string().regex(LOCALE_PATTERN).optional(),
  /**
   * Present when the agent takes attachments (docs/widget.md#attachments): the widget then offers its attach button,
   * paste and drag-and-drop, and checks type, size and count before uploading.
   */
  attachments: z
    .object({
      accept: z.array(z.string()),
      maxBytes: z.number().int(),
      maxFiles: z.number().int(),
    })
    .optional(),
});

export type Presentation = z.infer<typeof presentationSchema>;
