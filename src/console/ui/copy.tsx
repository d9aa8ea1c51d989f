// Copies a text to the clipboard and says so (announced); where the clipboard is refused, says how to copy by hand.
import { useEffect, useState } from "preact/hooks";

export function CopyButton(props: { text: string; label: string; class?: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  useEffect(() => {
    if (state !== "copied") return;
    const timer = setTimeout(() => setState("idle"), 2500);
    return () => clearTimeout(timer);
  }, [state]);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.text);
      setState("copied");
    } catch {
      setState("failed");
    }
  };
  return (
    <span class="copy">
      <button type="button" class={props.class} onClick={() => void copy()}>
        {state === "copied" ? "Copied" : props.label}
      </button>
      <span role="status" class={state === "failed" ? "note error copy-status" : "sr-only"}>
        {state === "copied"
          ? "Copied to the clipboard."
          : state === "failed"
            ? "The browser refused the clipboard: select the text and copy it."
            : ""}
      </span>
    </span>
  );
}
