// Thread objects never send email: wrangler.toml aliases the SDK's `mimetext` import (used only by
// `Agent.replyToEmail`) to this module, keeping the MIME library and its 136 KB type database out of the Worker.
export function createMimeMessage(): never {
  throw new Error("Thread objects do not send email.");
}
