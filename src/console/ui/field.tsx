// A labelled form control with its hint and error text linked by aria-describedby, so a screen reader reads both
// with the control, and the control is marked invalid while its error shows.
import type { ComponentChildren, JSX } from "preact";

/** What the control must carry to be linked to its label, hint and error. */
export interface FieldControl {
  id: string;
  "aria-describedby"?: string;
  "aria-invalid"?: boolean;
}

export function Field(props: {
  id: string;
  label: ComponentChildren;
  hint?: ComponentChildren;
  error?: string | undefined;
  /** Renders the control with the given attributes spread on it. */
  children: (control: FieldControl) => JSX.Element;
}) {
  const hintId = props.hint ? `${props.id}-hint` : undefined;
  const errorId = props.error ? `${props.id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(" ");
  return (
    <div class="field">
      <label for={props.id}>{props.label}</label>
      {props.children({
        id: props.id,
        ...(describedBy ? { "aria-describedby": describedBy } : {}),
        ...(props.error ? { "aria-invalid": true } : {}),
      })}
      {props.hint ? (
        <p id={hintId} class="field-hint muted">
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p id={errorId} class="field-error">
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/**
 * Splits a 400's `details` (`[{path, message}]`) by the first segment of each path, so a form shows each message
 * under its field; what matches no field of `fields` stays in `rest` for the form's own error line.
 */
export function fieldErrors(
  details: unknown,
  fields: readonly string[],
): { byField: Record<string, string>; rest: string[] } {
  const byField: Record<string, string> = {};
  const rest: string[] = [];
  if (!Array.isArray(details)) return { byField, rest };
  for (const item of details) {
    if (typeof item !== "object" || item === null) continue;
    const { path, message } = item as { path?: unknown; message?: unknown };
    if (typeof message !== "string") continue;
    const [field = "", index] = typeof path === "string" ? path.split(".") : [];
    // `allowedOrigins.2`: the third entry of a list field.
    const entry = index !== undefined && /^\d+$/.test(index) ? `Entry ${Number(index) + 1}: ` : "";
    if (fields.includes(field)) byField[field] ??= `${entry}${message}`;
    else rest.push(typeof path === "string" ? `${path}: ${message}` : message);
  }
  return { byField, rest };
}
