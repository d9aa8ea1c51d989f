// Thread ids are server-generated: `thr_` + 128 random bits, never chosen by a client.
import { randomBytes } from "../shared/bytes";
import { toHex } from "../shared/hex";

export const THREAD_ID_PATTERN = /^thr_[0-9a-f]{32}$/;

export function newThreadId(): string {
  return `thr_${toHex(randomBytes(16))}`;
}
