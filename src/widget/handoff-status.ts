// The line above the composer while a person answers the thread instead of the model (handoff, docs/protocol.md).
import type { ThreadMode } from "../shared/protocol";
import { handoffText } from "./control-rules";
import { h } from "./dom";
import { format, type Strings } from "./strings";

export interface Handoff {
  readonly active: boolean;
  /**
   * A new mode (`ready`, `mode` frames) and/or the name of the person who wrote last; changes are announced
   * unless `quiet` (a new thread).
   */
  update(mode: ThreadMode | undefined, person?: string, quiet?: boolean): void;
}

/** Puts the (hidden) line before `anchor`. */
export function handoffStatus(
  s: Strings,
  anchor: HTMLElement,
  announce: (text: string) => void,
  agent: () => string,
): Handoff {
  const line = h("p", { class: "handoff", part: "handoff" });
  let mode: ThreadMode = "agent";
  let person: string | undefined;
  line.hidden = true;
  anchor.before(line);
  return {
    get active() {
      return mode === "handoff";
    },
    update(next, name, quiet) {
      const before = line.textContent;
      if (next !== undefined) mode = next;
      if (next === "agent") person = undefined;
      else if (name) person = name;
      const text = handoffText(s, mode, person);
      line.textContent = text;
      line.hidden = text === "";
      if (text !== before && !quiet) announce(text || format(s.handoffEnded, { agent: agent() }));
    },
  };
}
