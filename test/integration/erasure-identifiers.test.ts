// Erasure leaves no subject id behind (docs/privacy.md): not in the registry's tombstone, not in a pin, not in D1's copy.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { expectNothingLeft } from "../helpers/erasure-scan";
import { converse, drainThread, launchFor, threadStub } from "../helpers/projection";
import { api } from "../helpers/tenants";
import { liveAgent } from "../helpers/threads";

/** Every D1 row, in any table, that mentions `needle` in any text column. */
async function rowsMentioning(needle: string): Promise<string[]> {
  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT LIKE 'd1_%'",
  ).all<{ name: string }>();
  const found: string[] = [];
  for (const { name } of tables.results) {
    const columns = await env.DB.prepare(`SELECT name FROM pragma_table_info(?)`)
      .bind(name)
      .all<{ name: string }>();
    for (const column of columns.results) {
      const hit = await env.DB.prepare(
        `SELECT COUNT(*) AS n FROM "${name}" WHERE CAST("${column.name}" AS TEXT) LIKE ?`,
      )
        .bind(`%${needle}%`)
        .first<{ n: number }>();
      if ((hit?.n ?? 0) > 0) found.push(`${name}.${column.name}`);
    }
  }
  return found;
}

describe("erasure leaves no identifiers", () => {
  it("keeps a tombstone without the subject, and no pin row", async () => {
    const agent = await liveAgent({ agent: { visibility: "private" } });
    const subject = `erasable-${crypto.randomUUID()}`;
    const doomed = await launchFor(agent, subject);
    await converse(doomed, ["remember me"]);
    await drainThread(await threadStub(agent, doomed.threadId));
    expect(await rowsMentioning(subject)).toEqual(
      expect.arrayContaining(["threads.subject", "agent_sessions.user_id"]),
    );
    const pinsBefore = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM thread_pins WHERE tenant_id = ? AND thread_id = ?",
    )
      .bind(agent.tenantId, doomed.threadId)
      .first<{ n: number }>();
    expect(pinsBefore?.n).toBe(1);

    const res = await api(`/v1/sessions/${doomed.threadId}`, { method: "DELETE", key: agent.apiKey });
    expect(res.status).toBe(204);

    expect(await rowsMentioning(subject)).toEqual([]);
    const tombstone = await env.DB.prepare(
      "SELECT subject, deleted_at FROM threads WHERE tenant_id = ? AND id = ?",
    )
      .bind(agent.tenantId, doomed.threadId)
      .first<{ subject: string; deleted_at: string | null }>();
    expect(tombstone).toEqual({ subject: "", deleted_at: expect.stringMatching(/^\d{4}-/) });
    const pinsAfter = await env.DB.prepare(
      "SELECT COUNT(*) AS n FROM thread_pins WHERE tenant_id = ? AND thread_id = ?",
    )
      .bind(agent.tenantId, doomed.threadId)
      .first<{ n: number }>();
    expect(pinsAfter?.n).toBe(0);

    // Erasing again is harmless and keeps the tombstone as it is.
    expect(
      (await api(`/v1/sessions/${doomed.threadId}`, { method: "DELETE", key: agent.apiKey })).status,
    ).toBe(204);
    expect(await rowsMentioning(subject)).toEqual([]);
    await expectNothingLeft({
      tenantId: agent.tenantId,
      needles: [subject, "remember me"],
      threads: [{ tenantId: agent.tenantId, agentId: agent.agentId, threadId: doomed.threadId }],
    });
  });
});
