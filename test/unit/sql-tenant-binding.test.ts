// Every statement the projection, the sessions repository and the retention job send binds the tenant (and, for an
// end user's reads, the subject); the same rule runs over all of src/ in `scripts/check-sql-tenancy.mjs`.
import { describe, expect, it } from "vitest";
import { analyticsSql } from "../../src/storage/d1/analytics";
import { APPROVALS_SQL } from "../../src/storage/d1/approvals";
import { PROJECTION_SQL } from "../../src/storage/d1/projection-writer";
import { RETENTION_SQL } from "../../src/storage/d1/session-retention";
import { searchStatements, tenantToken } from "../../src/storage/d1/session-search";
import { SESSIONS_SQL, sessionListSql, sessionsSql } from "../../src/storage/d1/sessions-repository";

const TENANT_TABLES = [
  "agent_sessions",
  "agent_messages",
  "agent_runs",
  "agent_tool_calls",
  "agent_usage",
  "agent_message_feedback",
  "agent_approvals",
  "threads",
  "agent_analytics_daily",
  "agent_analytics_first_delta",
  "agent_versions",
  "agent_messages_fts",
] as const;

const tableRef = new RegExp(`\\b(FROM|JOIN|UPDATE)\\s+(${TENANT_TABLES.join("|")})\\b`, "gi");
const insertInto = new RegExp(`\\bINSERT\\s+INTO\\s+(${TENANT_TABLES.join("|")})\\s*\\(([^)]*)\\)`, "gi");
// A bound tenant, or (as scripts/check-sql-tenancy.mjs allows) a join on another reference's bound tenant.
const tenantBinding = /\b(?:\w+\.)?tenant_id = (?:\?|\w+\.tenant_id\b)/g;

/** Problems with one statement: each read or change of a tenant table needs its own `tenant_id = ?`. */
function tenancyProblems(sql: string, options: { subject?: boolean } = {}): string[] {
  const problems: string[] = [];
  const refs = [...sql.matchAll(tableRef)].map((m) => m[2]);
  const bindings = sql.match(tenantBinding)?.length ?? 0;
  if (refs.length > bindings) {
    problems.push(
      `${refs.length} tenant table references (${refs.join(", ")}) but ${bindings} tenant bindings`,
    );
  }
  for (const insert of sql.matchAll(insertInto)) {
    if (!/\btenant_id\b/.test(insert[2] ?? "")) problems.push(`INSERT INTO ${insert[1]} without tenant_id`);
  }
  if (options.subject && !/\buser_id = \?/.test(sql)) problems.push("subject read without user_id = ?");
  return problems;
}

const anyTableRef = new RegExp(tableRef.source, "i");
const anyInsert = new RegExp(insertInto.source, "i");
const touchesTenantData = (sql: string) => anyTableRef.test(sql) || anyInsert.test(sql);

describe("SQL on tenant data", () => {
  it("binds tenant_id in every projection statement", () => {
    for (const [name, sql] of Object.entries(PROJECTION_SQL)) {
      expect(touchesTenantData(sql), name).toBe(true);
      expect(tenancyProblems(sql), name).toEqual([]);
    }
  });

  it("binds tenant_id in every read, and user_id in every end-user read", () => {
    const statements = sessionsSql();
    expect(statements.length).toBeGreaterThan(40);
    for (const { scope, sql } of statements) {
      expect(tenancyProblems(sql, { subject: scope === "subject" }), sql).toEqual([]);
    }
    // The subject scope fixes the agent as well, and never lets a filter widen it.
    for (const s of statements.filter(
      (x) => x.scope === "subject" && x.sql.includes("FROM agent_sessions"),
    )) {
      expect(s.sql).toContain("user_id = ? AND agent_id = ?");
    }
    expect(SESSIONS_SQL.erase).toHaveLength(7);
    expect(SESSIONS_SQL.erase.some((sql) => sql.includes("agent_approvals"))).toBe(true);
    for (const [name, sql] of Object.entries(APPROVALS_SQL)) {
      expect(touchesTenantData(sql), name).toBe(true);
      expect(tenancyProblems(sql), name).toEqual([]);
    }
  });

  it("binds tenant_id in every retention statement except the walk over tenants", () => {
    for (const [name, sql] of Object.entries(RETENTION_SQL)) {
      if (name === "tenantsPage") {
        expect(sql).not.toMatch(anyTableRef);
        continue;
      }
      expect(tenancyProblems(sql), name).toEqual([]);
    }
  });

  it("binds tenant_id in every analytics and search statement, and every search MATCHes", () => {
    const analytics = analyticsSql();
    expect(analytics).toHaveLength(9);
    for (const sql of analytics) expect(tenancyProblems(sql), sql).toEqual([]);
    const search = searchStatements();
    expect(search.length).toBeGreaterThan(40);
    for (const sql of search) {
      expect(tenancyProblems(sql), sql).toEqual([]);
      // The tenant's token comes with the MATCH expression; the FTS rows are also checked by tenant_id.
      const ftsReads = sql.match(/FROM agent_messages_fts/g)?.length ?? 0;
      expect(sql.match(/agent_messages_fts MATCH \? AND tenant_id = \?/g)?.length ?? 0, sql).toBe(ftsReads);
    }
    expect(search.filter((sql) => sql.includes("agent_messages_fts MATCH")).length).toBe(search.length - 1);
    // A tenant's token is one tokenizer token (letters and digits) and differs per tenant id.
    expect(tenantToken("ten_a")).toMatch(/^t[0-9A-F]+x$/);
    expect(tenantToken("ten_a")).not.toBe(tenantToken("ten_b"));
    expect(tenantToken("é")).toBe("tC3A9x");
  });

  it("catches a statement that forgets the tenant", () => {
    expect(tenancyProblems("SELECT * FROM agent_sessions WHERE id = ?")).not.toEqual([]);
    expect(
      tenancyProblems(
        "DELETE FROM agent_messages WHERE tenant_id = ? AND id IN (SELECT id FROM agent_messages)",
      ),
    ).not.toEqual([]);
    expect(tenancyProblems("INSERT INTO agent_usage (session_id) VALUES (?)")).not.toEqual([]);
    // A join counts only when it is on a bound reference's tenant.
    expect(
      tenancyProblems(
        "SELECT * FROM agent_messages m LEFT JOIN agent_message_feedback f ON f.message_id = m.id WHERE m.tenant_id = ?",
      ),
    ).not.toEqual([]);
    expect(
      tenancyProblems(
        `${sessionListSql({ scope: "tenant", agentId: true, subject: false, updatedAfter: false, cursor: false, preview: false })}`,
        { subject: true },
      ),
    ).toEqual(["subject read without user_id = ?"]);
  });
});
