// B7 in the bench Worker: seeds a synthetic tenant straight into D1 (threads, sessions, runs, usage, feedback and
// messages with text from a small vocabulary) with INSERT … SELECT over recursive CTEs, so the product's triggers
// build the analytics rollup and the search index exactly as the projection would; then runs the product's own
// analytics and search reads against it.
import { analytics, firstDeltaBucket } from "../../../src/storage/d1/analytics";
import { matchExpression, tenantToken } from "../../../src/storage/d1/search-terms";
import { searchSessions } from "../../../src/storage/d1/session-search";

export const INSIGHTS_TENANT = "ten_bench_insights";
export const INSIGHTS_NOISE_TENANT = "ten_bench_insights_other";
const AGENT = "agt_bench_insights";
/** Turns per thread; each is a user message and an assistant reply. */
export const TURNS_PER_THREAD = 10;
export const MESSAGES_PER_THREAD = TURNS_PER_THREAD * 2;
/** Threads spread over this many days back from today, one version of two each (a 50/50 release). */
const DAYS = 60;

// A support desk's words, most common first: a message's words are drawn with a skew toward the start.
const VOCABULARY = `the my i you to and a is it for of order please can in on not with this have what
  was be when your help me we do are how that thank thanks hi hello there at get but an will just or
  from need would like if so know time any been has they no did account want could there one out now
  about up please still day week get got make sure item package delivery shipping refund return
  payment card charged invoice price cost total discount code coupon plan subscription cancel renew
  upgrade downgrade password login email address phone number name change update reset link error
  problem issue broken wrong missing late damaged size color replace exchange store online app
  website page cart checkout track tracking status arrived sent ship warehouse courier box label
  receipt bill billing tax fee monthly yearly trial free premium support agent manager team call
  chat message reply answer question wait waiting today tomorrow yesterday monday friday weekend
  morning evening hours open close closed location city country canada mexico france germany spain
  italy japan brazil india australia london paris berlin madrid rome tokyo sydney toronto dallas
  chicago blue red green black white large small medium jacket shoes shirt dress bag watch phone
  laptop tablet charger cable battery screen headphones speaker camera printer router keyboard mouse
  warranty repair technician appointment schedule booking reservation ticket flight hotel room
  upgrade seat baggage gate boarding delay delayed cancelled voucher credit balance transfer bank
  wire paypal crypto wallet limit verify identity document passport photo selfie approved rejected
  pending processing shipped delivered returned refunded partial full amount double twice again`
  .split(/\s+/)
  .filter((w) => w.length > 0);

/** A SQL CASE that maps `(k % n)` to a word index with a square-law skew toward common words. */
function wordExpr(key: string, a: number, b: number): string {
  const v = VOCABULARY.length;
  // ((h1 % v) * (h2 % v)) / v is 0..v-1 and favours small indexes, as word frequencies do.
  return `(SELECT word FROM bench_vocab WHERE id = (((${key} * ${a} + ${b}) % ${v}) * ((${key} * ${b} + ${a}) % ${v})) / ${v})`;
}

/** A message of 6–13 words from the vocabulary, deterministic in `key`. */
function textExpr(key: string): string {
  const primes = [
    [7919, 104729],
    [15485863, 32452843],
    [49979687, 86028121],
    [122949829, 141650939],
    [179424673, 198491317],
    [217645177, 236887691],
    [256203161, 275604541],
    [295075147, 314606869],
    [334214459, 353868013],
    [373587883, 393342739],
    [413158511, 433024223],
    [452930459, 472882027],
    [492876847, 512927357],
  ] as const;
  const words = primes.map(([a, b], i) =>
    i < 6
      ? wordExpr(key, a, b)
      : `CASE WHEN (${key} % 8) >= ${i - 5} THEN ' ' || ${wordExpr(key, a, b)} ELSE '' END`,
  );
  return `${words.slice(0, 6).join(" || ' ' || ")} || ${words.slice(6).join(" || ")}`;
}

/** First-delta times (ms) per version, cycled by run; the bucket of each is computed here, as the drain does. */
const FIRST_DELTA_MS = [
  [180, 220, 240, 260, 300, 320, 350, 400, 450, 520, 600, 900, 1400, 2100, 250, 280],
  [150, 170, 190, 200, 210, 230, 250, 270, 300, 340, 380, 450, 700, 1200, 190, 205],
] as const;

function firstDeltaCase(key: string, column: "ms" | "bucket"): string {
  const arms = FIRST_DELTA_MS.flatMap((list, v) =>
    list.map(
      (ms, i) =>
        `WHEN (${key} / ${TURNS_PER_THREAD}) % 2 = ${v} AND ${key} % ${list.length} = ${i} THEN ${column === "ms" ? ms : firstDeltaBucket(ms)}`,
    ),
  );
  return `CASE ${arms.join(" ")} END`;
}

const range = (from: string, to: string) =>
  `WITH RECURSIVE n(k) AS (SELECT ${from} UNION ALL SELECT k + 1 FROM n WHERE k < ${to})`;

/** Control-plane rows the rollup's version lookup needs, and the vocabulary table. */
async function prepare(db: D1Database, tenantId: string): Promise<void> {
  const now = new Date().toISOString();
  await db.batch([
    db.prepare("CREATE TABLE IF NOT EXISTS bench_vocab (id INTEGER PRIMARY KEY, word TEXT NOT NULL)"),
    db
      .prepare("INSERT OR IGNORE INTO tenants (id, name, created_at) VALUES (?, 'Bench insights', ?)")
      .bind(tenantId, now),
    db
      .prepare(
        `INSERT OR IGNORE INTO agents (tenant_id, id, slug, name, visibility, public_key, created_at, updated_at)
         VALUES (?, ?, 'insights', 'Insights', 'private', ?, ?, ?)`,
      )
      .bind(tenantId, AGENT, `pk_${tenantId}`, now, now),
    ...[1, 2].map((v) =>
      db
        .prepare(
          `INSERT OR IGNORE INTO agent_versions (tenant_id, agent_id, version, id, draft_revision, schema_version,
             artifact, digest, created_at) VALUES (?, ?, ?, ?, ?, 1, '{}', 'sha256:bench', ?)`,
        )
        .bind(tenantId, AGENT, v, `${tenantId}_v${v}`, v, now),
    ),
  ]);
  await db.batch(
    VOCABULARY.map((word, id) =>
      db.prepare("INSERT OR IGNORE INTO bench_vocab (id, word) VALUES (?, ?)").bind(id, word),
    ),
  );
}

/**
 * Threads `[fromThread, toThread)` of `tenantId` with all their rows: a registry row, a session, ten runs with usage
 * and a first delta, twenty messages and feedback on every fifth reply. Returns the statements' wall time.
 */
export async function seedChunk(
  db: D1Database,
  tenantId: string,
  fromThread: number,
  toThread: number,
): Promise<{ ms: number; messages: number }> {
  const t0 = Date.now();
  if (fromThread === 0) await prepare(db, tenantId);
  const last = toThread - 1;
  // Parenthesised: `||` binds tighter than `/` in SQLite.
  const thread = (k: string) => `'bthr_' || (${k})`;
  const dayExpr = (k: string) => `date('now', '-' || ((${k}) % ${DAYS}) || ' days')`;
  const at = (k: string) => `${dayExpr(k)} || 'T12:00:00.000Z'`;
  const versionId = (k: string) => `'${tenantId}_v' || ((${k}) % 2 + 1)`;
  const runK = (k: string) => `${k} / ${TURNS_PER_THREAD}`;
  // The vocabulary's words are lower-case letters joined by single spaces, so prefixing each space-separated word
  // with the tenant's key gives exactly what the projection writes (indexTerms in src/storage/d1/search-terms.ts).
  const key = tenantToken(tenantId);
  const statements = [
    `${range(String(fromThread), String(last))}
     INSERT INTO threads (tenant_id, id, agent_id, environment, subject, subject_kind, created_at)
     SELECT '${tenantId}', ${thread("k")}, '${AGENT}', 'production', 'user_' || (k % 5000), 'user', ${at("k")} FROM n`,
    `${range(String(fromThread), String(last))}
     INSERT INTO agent_sessions (tenant_id, id, agent_id, agent_name, environment, agent_version, version_id,
       artifact_digest, user_id, state, title, message_count, last_message_at, projected_seq, version, created_at,
       updated_at)
     SELECT '${tenantId}', ${thread("k")}, '${AGENT}', 'Insights', 'production', k % 2 + 1, ${versionId("k")},
       'sha256:bench', 'user_' || (k % 5000), '{"leafId":null,"lastRun":null}', 'Bench thread ' || k,
       ${MESSAGES_PER_THREAD}, ${at("k")}, ${MESSAGES_PER_THREAD}, 1, ${at("k")}, ${at("k")} FROM n`,
    `${range(String(fromThread * TURNS_PER_THREAD), String(toThread * TURNS_PER_THREAD - 1))}
     INSERT INTO agent_runs (tenant_id, session_id, id, agent_id, version_id, status, day, version, created_at,
       first_delta_ms, first_delta_bucket)
     SELECT '${tenantId}', ${thread(runK("k"))}, 'brun_' || k, '${AGENT}', ${versionId(runK("k"))},
       CASE WHEN k % 37 = 0 THEN 'failed' ELSE 'succeeded' END, ${dayExpr(runK("k"))}, 3, ${at(runK("k"))},
       ${firstDeltaCase("k", "ms")}, ${firstDeltaCase("k", "bucket")} FROM n`,
    `${range(String(fromThread * TURNS_PER_THREAD), String(toThread * TURNS_PER_THREAD - 1))}
     INSERT INTO agent_usage (tenant_id, session_id, run_id, turn, agent_id, day, provider, model, input_tokens,
       output_tokens, version, created_at)
     SELECT '${tenantId}', ${thread(runK("k"))}, 'brun_' || k, 0, '${AGENT}', ${dayExpr(runK("k"))}, 'local', 'echo',
       120 + k % 400, 30 + k % 90, 1, ${at(runK("k"))} FROM n`,
    `${range(String(fromThread * MESSAGES_PER_THREAD), String(toThread * MESSAGES_PER_THREAD - 1))}
     INSERT INTO agent_messages (tenant_id, session_id, id, seq, parent_id, run_id, kind, role, content, status,
       user_id, version, created_at, search_terms)
     SELECT '${tenantId}', ${thread(`k / ${MESSAGES_PER_THREAD}`)}, 'bent_' || k, k % ${MESSAGES_PER_THREAD} + 1,
       CASE WHEN k % ${MESSAGES_PER_THREAD} = 0 THEN NULL ELSE 'bent_' || (k - 1) END, 'brun_' || (k / 2), 'message',
       CASE WHEN k % 2 = 0 THEN 'user' ELSE 'assistant' END, txt,
       CASE WHEN k % 2 = 1 THEN 'complete' END, 'user_' || ((k / ${MESSAGES_PER_THREAD}) % 5000), 1,
       ${at(`k / ${MESSAGES_PER_THREAD}`)}, '${key}' || replace(txt, ' ', ' ${key}')
     FROM (SELECT k, ${textExpr("k")} AS txt FROM n)`,
    `${range(String(fromThread * TURNS_PER_THREAD), String(toThread * TURNS_PER_THREAD - 1))}
     INSERT INTO agent_message_feedback (tenant_id, session_id, message_id, rating, user_id, version, created_at,
       updated_at)
     SELECT '${tenantId}', ${thread(runK("k"))}, 'bent_' || (k * 2 + 1), CASE WHEN k % 3 = 0 THEN 'down' ELSE 'up' END,
       'user_' || ((${runK("k")}) % 5000), 1, ${at(runK("k"))}, ${at(runK("k"))} FROM n WHERE k % 5 = 0`,
  ];
  for (const sql of statements) await db.prepare(sql).run();
  return { ms: Date.now() - t0, messages: (toThread - fromThread) * MESSAGES_PER_THREAD };
}

/** One analytics or search read, as the routes make it, timed in the Worker. */
export async function insightsQuery(
  db: D1Database,
  kind:
    | "analytics-version"
    | "analytics-day"
    | "search"
    | "search-page-2"
    | "search-two-words"
    | "search-common"
    | "search-small-tenant",
): Promise<{ ms: number; items: number }> {
  const to = new Date().toISOString().slice(0, 10);
  const from = new Date(Date.now() - 29 * 86_400_000).toISOString().slice(0, 10);
  // The second page of the one-word search starts where the first ended (its cursor is read before timing).
  const page2 =
    kind === "search-page-2"
      ? (await searchSessions(db, INSIGHTS_TENANT, "warranty", {}, { limit: 50 })).next
      : undefined;
  const t0 = Date.now();
  let items: number;
  if (kind === "analytics-version" || kind === "analytics-day") {
    const groupBy = kind === "analytics-version" ? "version" : "day";
    items = (
      await analytics({ shard: db, control: db }, INSIGHTS_TENANT, { from, to, groupBy, agentId: AGENT })
    ).length;
  } else {
    const q =
      kind === "search-two-words" ? "refund damaged" : kind === "search-common" ? "order" : "warranty";
    const page = { limit: 50, ...(page2 !== undefined ? { after: page2 } : {}) };
    // The small tenant shares the vocabulary: its search reads its own terms only, whatever the big tenant holds.
    const tenant = kind === "search-small-tenant" ? INSIGHTS_NOISE_TENANT : INSIGHTS_TENANT;
    items = (await searchSessions(db, tenant, q, {}, page)).items.length;
  }
  return { ms: Date.now() - t0, items };
}

/** How many of the tenant's indexed messages contain a word: context for the search figures. */
export async function matchingMessages(db: D1Database, word: string): Promise<number> {
  const row = await db
    .prepare(
      "SELECT COUNT(*) AS n FROM agent_messages_fts WHERE agent_messages_fts MATCH ? AND tenant_id = ?",
    )
    .bind(matchExpression(INSIGHTS_TENANT, [word]), INSIGHTS_TENANT)
    .first<{ n: number }>();
  return row?.n ?? 0;
}
