-- Launch shares per tenant (docs/operations.md, "Quotas"): the part of the daily launch quota kept for private
-- (backend, sk_) launches, and the part one agent's public launches may use, in whole percent; NULL = the default
-- (50 each).
ALTER TABLE tenants ADD COLUMN private_launch_reserve_percent INTEGER
  CHECK (private_launch_reserve_percent IS NULL OR private_launch_reserve_percent BETWEEN 0 AND 100);
ALTER TABLE tenants ADD COLUMN agent_public_launch_share_percent INTEGER
  CHECK (agent_public_launch_share_percent IS NULL OR agent_public_launch_share_percent BETWEEN 1 AND 100);
