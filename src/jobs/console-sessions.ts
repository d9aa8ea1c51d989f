// The scheduled clean-up of console sessions: an expired session authenticates no one, so its row goes.
import { deleteExpiredConsoleSessions } from "../storage/d1/console-sessions";

/** Deletes the sessions expired at `now` (epoch ms, passed explicitly so tests control the clock). */
export async function pruneConsoleSessions(env: Env, now: number): Promise<number> {
  const deleted = await deleteExpiredConsoleSessions(env.DB, new Date(now).toISOString());
  if (deleted > 0) {
    console.log(JSON.stringify({ level: "info", message: "expired console sessions deleted", deleted }));
  }
  return deleted;
}
