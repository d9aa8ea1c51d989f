// What the agent list (create) and the agent's settings share: visibility, allowed origins, the slug, the embed.
import { Field } from "../ui/field";

/** docs/api.md's slug (src/shared/api.ts `slugSchema`), repeated here as a pattern so the console ships no zod. */
export const SLUG_PATTERN = "[a-z0-9][a-z0-9\\-]{0,62}";

/** A slug suggested from a name: "Support bot (EU)" → "support-bot-eu". */
export function slugFromName(name: string): string {
  return name
    .toLowerCase()
    .normalize("NFKD")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
}

/** The script tag the README documents, for this deployment's host and this agent's key. */
export function embedSnippet(publicKey: string, origin: string = location.origin): string {
  return `<script src="${origin}/embed.js" data-agent-key="${publicKey}" async></script>`;
}

/** One origin a line (commas and spaces separate too); blank lines are dropped. */
export function parseOrigins(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((origin) => origin.trim())
    .filter((origin) => origin.length > 0);
}

export function VisibilityField(props: {
  name: string;
  value: "public" | "private";
  onChange: (value: "public" | "private") => void;
}) {
  return (
    <fieldset class="field choices">
      <legend>Visibility</legend>
      <label class="choice">
        <input
          type="radio"
          name={props.name}
          value="public"
          checked={props.value === "public"}
          onChange={() => props.onChange("public")}
        />
        <span>
          Public{" "}
          <span class="muted">— any page on an allowed origin can start a conversation with its key</span>
        </span>
      </label>
      <label class="choice">
        <input
          type="radio"
          name={props.name}
          value="private"
          checked={props.value === "private"}
          onChange={() => props.onChange("private")}
        />
        <span>
          Private <span class="muted">— only your backend launches it, for its signed-in users</span>
        </span>
      </label>
    </fieldset>
  );
}

export function OriginsField(props: {
  id: string;
  value: string;
  error: string | undefined;
  onInput: (value: string) => void;
}) {
  return (
    <Field
      id={props.id}
      label="Allowed origins"
      hint="One a line, such as https://example.com or https://*.example.com (no path; http only for localhost)."
      error={props.error}
    >
      {(control) => (
        <textarea
          {...control}
          name="allowedOrigins"
          rows={3}
          spellcheck={false}
          autoComplete="off"
          value={props.value}
          onInput={(event) => props.onInput(event.currentTarget.value)}
        />
      )}
    </Field>
  );
}
