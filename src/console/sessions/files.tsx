// The files of a conversation (docs/api.md#attachments): those a user message carries, on the message, and every
// upload of the thread in a card; name, media type, size and SHA-256 prefix, each downloaded through the console's
// session (never a link carrying a credential).
import { useEffect, useState } from "preact/hooks";
import type { AttachmentRef } from "../../shared/protocol";
import { api, describeError } from "../api";

/** `1.5 MB`, `12 KB`, `300 bytes`. */
export function sizeLabel(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${bytes} bytes`;
}

export async function save(threadId: string, file: AttachmentRef): Promise<void> {
  const blob = await api().sessions.downloadAttachment(threadId, file.id);
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = file.name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Nothing when the conversation has no files (or the list cannot be read: the messages still show). */
export function Files(props: { threadId: string }) {
  const [files, setFiles] = useState<AttachmentRef[]>([]);
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    api()
      .sessions.attachments(props.threadId)
      .then((page) => live && setFiles(page.items))
      .catch(() => live && setFiles([]));
    return () => {
      live = false;
    };
  }, [props.threadId]);
  if (files.length === 0) return null;
  return (
    <section class="card" aria-labelledby="session-files">
      <h2 id="session-files">Files</h2>
      {error ? <p class="error">{error}</p> : null}
      <ul class="files">
        {files.map((file) => (
          <li key={file.id}>
            <button
              type="button"
              class="small"
              aria-label={`Download ${file.name}`}
              onClick={() => {
                setError(undefined);
                save(props.threadId, file).catch((e: unknown) =>
                  setError(`Could not download ${file.name}: ${describeError(e)}`),
                );
              }}
            >
              Download
            </button>{" "}
            <strong>{file.name}</strong> <span class="muted">{file.mediaType}</span>{" "}
            <span class="muted">{sizeLabel(file.size)}</span>{" "}
            <code class="muted" title={file.sha256}>
              sha256 {file.sha256.slice(0, 12)}
            </code>
          </li>
        ))}
      </ul>
    </section>
  );
}

/** A user message's files, under its text: one download button each. */
export function MessageFiles(props: { threadId: string; files: AttachmentRef[] | undefined }) {
  const [error, setError] = useState<string>();
  const files = props.files ?? [];
  if (files.length === 0) return null;
  return (
    <>
      <ul class="files" aria-label="Attachments">
        {files.map((file) => (
          <li key={file.id}>
            <button
              type="button"
              class="small"
              aria-label={`Download ${file.name} (${file.mediaType}, ${sizeLabel(file.size)})`}
              onClick={() => {
                setError(undefined);
                save(props.threadId, file).catch((e: unknown) =>
                  setError(`Could not download ${file.name}: ${describeError(e)}`),
                );
              }}
            >
              {file.name}
            </button>{" "}
            <span class="muted">
              {file.mediaType}, {sizeLabel(file.size)}
            </span>
          </li>
        ))}
      </ul>
      {error ? <p class="error">{error}</p> : null}
    </>
  );
}
