-- Which agents allow which origins, for the one look-up that runs before any credential: a CORS preflight (and the
-- CORS check of a failed browser request) asks whether some active agent allows the request's Origin. Reading that
-- from agents.allowed_origins meant a scan of every tenant's agents per request; this table answers it from an index.
--
-- `origin` holds an allowed-origin pattern in canonical form: an exact origin as itself (`https://shop.example.com`),
-- a single-label wildcard keyed by its parent (`https://*.example.com`). A request origin is looked up as itself and as
-- the wildcard of its one-label-stripped parent (`https://a.example.com` → also `https://*.example.com`), so both are
-- equality look-ups on the index. Written in the same batch as every write of agents.allowed_origins
-- (src/storage/d1/agents.ts); the agent's status stays in `agents` (the look-up joins it by primary key).
CREATE TABLE agent_origins (
  tenant_id  TEXT NOT NULL,
  agent_id   TEXT NOT NULL,
  origin     TEXT NOT NULL,
  PRIMARY KEY (tenant_id, agent_id, origin),
  FOREIGN KEY (tenant_id, agent_id) REFERENCES agents (tenant_id, id)
);
CREATE INDEX agent_origins_by_origin ON agent_origins (origin, tenant_id, agent_id);

-- Existing agents: their stored patterns are already canonical (lower-case, validated when the agent was saved).
INSERT OR IGNORE INTO agent_origins (tenant_id, agent_id, origin)
SELECT agents.tenant_id, agents.id, lower(pattern.value)
FROM agents, json_each(agents.allowed_origins) AS pattern
WHERE pattern.type = 'text';
