// The bytes of the attachments a prompt keeps, read from the tenant's object storage just before the prompt is built.
import { type BranchMessage, type BuildPromptInput, keptMessages } from "../../models/prompt";
import { base64Encode } from "../../shared/bytes";
import { readAttachmentBytes } from "../../storage/attachments";

/** An attachment's bytes by its SHA-256 (the tenant's object), or null when no object is stored under it. */
export type AttachmentBytes = (sha256: string) => Promise<Uint8Array | null>;

/** Reads the thread's tenant's objects: never another tenant's, since the key is the tenant's. */
export function attachmentReader(env: Env, tenantId: string): AttachmentBytes {
  const bucket: R2Bucket | undefined = env.ATTACHMENTS;
  return (sha256) =>
    bucket === undefined ? Promise.resolve(null) : readAttachmentBytes(bucket, tenantId, sha256);
}

const hasAttachments = (m: BranchMessage): boolean => m.role === "user" && (m.attachments?.length ?? 0) > 0;

/**
 * The prompt input with the bytes (base64) of every attachment of the messages the prompt keeps (`keptMessages`):
 * an attachment's token cost is a fixed estimate, so the window is the same before and after. Each object is read
 * once however many messages name it; messages outside the window are left as they are (their files are not read).
 * `read` absent, or an object no longer stored: `data: null`, which the prompt names as no longer stored.
 */
export async function withAttachmentBytes(
  input: BuildPromptInput,
  read: AttachmentBytes | undefined,
): Promise<BuildPromptInput> {
  if (!input.branch.some(hasAttachments)) return input;
  const kept = new Set(keptMessages(input));
  const loads = new Map<string, Promise<string | null>>();
  const load = (sha256: string): Promise<string | null> => {
    let loaded = loads.get(sha256);
    if (loaded === undefined) {
      loaded = (read === undefined ? Promise.resolve(null) : read(sha256)).then((bytes) =>
        bytes === null ? null : base64Encode(bytes),
      );
      loads.set(sha256, loaded);
    }
    return loaded;
  };
  const branch = await Promise.all(
    input.branch.map(async (message): Promise<BranchMessage> => {
      if (message.role !== "user" || message.attachments === undefined || !kept.has(message)) return message;
      const attachments = await Promise.all(
        message.attachments.map(async (a) => ({ ...a, data: await load(a.sha256) })),
      );
      return { ...message, attachments };
    }),
  );
  return { ...input, branch };
}
