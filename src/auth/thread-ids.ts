// Thread ids are server-generated: `thr_` + 128 random bits, never chosen by a client.
export const THREAD_ID_PATTERN = /^thr_[0-9a-f]{32}$/;

export function newThreadId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `thr_${[...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}
