// What a pinned artifact shows in the widget (docs/protocol.md): its presentation fields, the greeting filled from context.
import type { Presentation } from "../shared/presentation";
import { type Artifact, attachmentPolicyOf } from "./artifact";
import { expandContext } from "./context-template";
import type { ContextVariables } from "./context-variables";

/** The parts of an artifact that presentation reads: small enough to cache per version. */
export type PresentationSource = Pick<Artifact, "greeting" | "suggestedPrompts" | "widget" | "attachments">;

export function presentationSource(artifact: Artifact): PresentationSource {
  return {
    ...(artifact.greeting !== undefined ? { greeting: artifact.greeting } : {}),
    ...(artifact.suggestedPrompts !== undefined ? { suggestedPrompts: artifact.suggestedPrompts } : {}),
    ...(artifact.widget !== undefined ? { widget: artifact.widget } : {}),
    ...(artifact.attachments !== undefined ? { attachments: artifact.attachments } : {}),
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
  // The widget offers attaching files only when the agent takes them, and checks them first (docs/widget.md#attachments).
  const policy = attachmentPolicyOf(source);
  if (policy !== null)
    out.attachments = { accept: policy.accept, maxBytes: policy.maxBytes, maxFiles: policy.maxFiles };
  return out;
}
