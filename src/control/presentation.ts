// What a pinned artifact shows in the widget (docs/protocol.md): its presentation fields, the greeting filled from context.
import type { Presentation } from "../shared/presentation";
import type { Artifact } from "./artifact";
import { expandContext } from "./context-template";
import type { ContextVariables } from "./context-variables";

/** The parts of an artifact that presentation reads: small enough to cache per version. */
export type PresentationSource = Pick<Artifact, "greeting" | "suggestedPrompts" | "widget">;

export function presentationSource(artifact: Artifact): PresentationSource {
  return {
    ...(artifact.greeting !== undefined ? { greeting: artifact.greeting } : {}),
    ...(artifact.suggestedPrompts !== undefined ? { suggestedPrompts: artifact.suggestedPrompts } : {}),
    ...(artifact.widget !== undefined ? { widget: artifact.widget } : {}),
  };
}

/**
 * Only the fields the artifact sets. `{{key}}` in the greeting becomes the thread's variable (unknown keys, and
 * every key of a thread without context, become ""); the other fields are the artifact's, as written.
 */
export function presentationOf(source: PresentationSource, variables: ContextVariables): Presentation {
  const widget = source.widget ?? {};
  const out: Presentation = {};
  if (widget.title !== undefined) out.title = widget.title;
  if (source.greeting !== undefined) out.greeting = expandContext(source.greeting, variables);
  if (source.suggestedPrompts !== undefined) out.suggestedPrompts = [...source.suggestedPrompts];
  if (widget.theme !== undefined) out.theme = widget.theme;
  if (widget.accentColor !== undefined) out.accentColor = widget.accentColor;
  if (widget.position !== undefined) out.position = widget.position;
  if (widget.strings !== undefined) out.strings = { ...widget.strings };
  if (widget.locale !== undefined) out.locale = widget.locale;
  return out;
}
