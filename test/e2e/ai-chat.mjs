// What the AI SDK transport's browser tests share: the client bundled from src/client, and an AI SDK `Chat` (the
// `ai` package's AbstractChat) over a plain state that records every text its reply showed.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { AbstractChat } from "ai";
import { build } from "esbuild";
import { root } from "../../scripts/lib/paths.mjs";

/** src/client, bundled once per test file (the package's TypeScript, exactly as a tenant's bundler would see it). */
export async function importClient(dir) {
  const out = join(dir, "client.mjs");
  const result = await build({
    entryPoints: [join(root, "src/client/index.ts")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    write: false,
  });
  writeFileSync(out, result.outputFiles[0].text);
  return import(pathToFileURL(out).href);
}

/** The state a framework would keep (React's, Vue's …): plain arrays here, with every text the reply showed. */
class PlainState {
  constructor(messages = []) {
    this.status = "ready";
    this.error = undefined;
    this.messages = messages;
    this.shown = [];
  }
  pushMessage = (message) => {
    this.messages = [...this.messages, message];
    this.#record(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = this.messages.map((m, i) => (i === index ? message : m));
    this.#record(message);
  };
  snapshot = (thing) => structuredClone(thing);
  #record(message) {
    if (message.role !== "assistant") return;
    const text = textOf(message);
    if (this.shown.at(-1) !== text) this.shown.push(text);
  }
}

export class NodeChat extends AbstractChat {
  constructor({ messages, ...init }) {
    const state = new PlainState(messages);
    super({ ...init, state });
    this.plain = state;
  }
}

export const textOf = (message) => message.parts.map((p) => (p.type === "text" ? p.text : "")).join("");
