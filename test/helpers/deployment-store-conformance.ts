// One conformance suite for every DeploymentStore implementation: the rules of docs/api.md, held identically.
import { describe, expect, it } from "vitest";
import { bucketFor, pickAllocation } from "../../src/control/allocation";
import { digestOf } from "../../src/control/canonical-json";
import type {
  AgentEntity,
  DeploymentStore,
  Environment,
  RuntimeRevision,
  Tenant,
} from "../../src/control/deployment-store";
import { CURRENT_RUNTIME } from "../../src/control/runtime";
import type { Result } from "../../src/errors";
import type { ErrorCode } from "../../src/shared/errors";

export interface StoreUnderTest {
  store: DeploymentStore;
  /** Rewrites a stored version's artifact text behind the store's back, as a corrupted or tampered row would. */
  tamperArtifact(tenantId: string, versionId: string, artifactText: string): Promise<void>;
}

/** A clock the suite moves by hand: every timestamp a store writes comes from it. */
export class TestClock {
  #ms = Date.UTC(2026, 10, 1, 12, 0, 0);
  /** When set, every reading moves the clock on by 1 ms, so racing writers stamp different times. */
  ticking = false;
  readonly now = (): Date => {
    if (this.ticking) this.#ms += 1;
    return new Date(this.#ms);
  };
  advance(ms = 1000): string {
    this.#ms += ms;
    return this.iso();
  }
  iso(): string {
    return new Date(this.#ms).toISOString();
  }
}

function value<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(`expected ok, got ${result.code}: ${result.message}`);
  return result.value;
}

function failure<T>(result: Result<T>, code: ErrorCode): { message: string; details?: unknown } {
  if (result.ok) throw new Error(`expected ${code}, got ok`);
  expect(result.code).toBe(code);
  return result;
}

function paths(details: unknown): string[] {
  return (details as { path: string }[]).map((d) => d.path);
}

let counter = 0;
const unique = (label: string) => `${label}-${Date.now().toString(36)}-${(counter++).toString(36)}`;

const artifact = (name = "Helper", extra: Record<string, unknown> = {}) => ({
  schemaVersion: 1,
  name,
  instructions: "Answer briefly.",
  model: { provider: "local", model: "echo" },
  ...extra,
});

export function describeDeploymentStore(name: string, makeStore: (clock: TestClock) => StoreUnderTest) {
  function setup() {
    const clock = new TestClock();
    const sut = makeStore(clock);
    return { clock, ...sut };
  }

  async function newTenant(store: DeploymentStore): Promise<Tenant> {
    return store.createTenant({ name: unique("tenant") });
  }

  async function newAgent(
    store: DeploymentStore,
    tenantId: string,
    slug = unique("agent"),
  ): Promise<AgentEntity> {
    return value(
      await store.createAgent(tenantId, {
        slug,
        name: `Agent ${slug}`,
        visibility: "public",
        allowedOrigins: ["https://shop.example.com"],
        publicKey: unique("pk"),
      }),
    );
  }

  /** Saves `definition` as the agent's next draft revision and publishes exactly that revision. */
  async function publish(store: DeploymentStore, tenantId: string, agentId: string, definition = artifact()) {
    const current = (await store.getDraft(tenantId, agentId))?.revision ?? 0;
    const { revision } = value(await store.saveDraft(tenantId, agentId, current, definition));
    return value(await store.publishDraft(tenantId, agentId, revision));
  }

  async function runtime(
    store: DeploymentStore,
    supportedSchemaVersions = [1],
    capabilities: string[] = ["tools.server"],
  ): Promise<RuntimeRevision> {
    const r = { id: unique("runtime"), supportedSchemaVersions, capabilities };
    await store.registerRuntime(r);
    return r;
  }

  async function world(s: ReturnType<typeof setup> = setup()) {
    const tenant = await newTenant(s.store);
    const agent = await newAgent(s.store, tenant.id);
    return { ...s, tenant, agent };
  }

  /** A tenant with an agent, published versions 1..n and an active release splitting them by `weights`. */
  async function deployed(
    weights: number[],
    environment: Environment = "production",
    base: ReturnType<typeof setup> = setup(),
  ) {
    const w = await world(base);
    for (const [i] of weights.entries())
      await publish(w.store, w.tenant.id, w.agent.id, artifact(`v${i + 1}`));
    await w.store.registerRuntime(CURRENT_RUNTIME);
    const release = value(
      await w.store.createRelease(w.tenant.id, w.agent.id, {
        environment,
        runtimeRevision: CURRENT_RUNTIME.id,
        allocations: weights.map((weight, i) => ({ version: i + 1, weight })),
      }),
    );
    value(await w.store.activateRelease(w.tenant.id, w.agent.id, release.id));
    return { ...w, release, environment };
  }

  describe(`DeploymentStore conformance: ${name}`, () => {
    describe("tenants", () => {
      it("creates a tenant and reads it back; an unknown id is absent", async () => {
        const { store, clock } = setup();
        const tenant = await store.createTenant({ name: "Acme" });
        expect(tenant).toEqual({
          id: expect.stringMatching(/^ten_[a-z2-7]{26}$/),
          name: "Acme",
          status: "active",
          createdAt: clock.iso(),
        });
        expect(await store.getTenant(tenant.id)).toEqual(tenant);
        expect(await store.getTenant("ten_nope")).toBeNull();
      });
    });

    describe("agents", () => {
      it("creates an agent that reads back by id and by public key", async () => {
        const { store, clock } = setup();
        const tenant = await newTenant(store);
        const agent = value(
          await store.createAgent(tenant.id, {
            slug: "support",
            name: "Support",
            visibility: "private",
            allowedOrigins: ["https://a.example.com", "https://*.example.org"],
            publicKey: unique("pk"),
          }),
        );
        expect(agent).toMatchObject({
          tenantId: tenant.id,
          id: expect.stringMatching(/^agt_[a-z2-7]{26}$/),
          slug: "support",
          status: "active",
          visibility: "private",
          allowedOrigins: ["https://a.example.com", "https://*.example.org"],
          createdAt: clock.iso(),
          updatedAt: clock.iso(),
        });
        expect(await store.getAgent(tenant.id, agent.id)).toEqual(agent);
        expect(await store.findAgentByPublicKey(agent.publicKey)).toEqual(agent);
        expect(await store.findAgentByPublicKey(unique("pk"))).toBeNull();
      });

      it("reads a launch's agent with whether it has an active release in that environment", async () => {
        const base = setup();
        const { store } = base;
        const other = await newTenant(store);
        const unreleased = await world(base);
        expect(await store.findLaunchAgent({ publicKey: unreleased.agent.publicKey }, "production")).toEqual({
          agent: unreleased.agent,
          released: false,
        });
        const d = await deployed([10_000], "production", base);
        for (const lookup of [
          { publicKey: d.agent.publicKey },
          { tenantId: d.tenant.id, agentId: d.agent.id },
        ]) {
          expect(await store.findLaunchAgent(lookup, "production")).toEqual({
            agent: d.agent,
            released: true,
          });
          // A release is per environment: another one has none.
          expect(await store.findLaunchAgent(lookup, "staging")).toEqual({ agent: d.agent, released: false });
        }
        expect(
          await store.findLaunchAgent({ tenantId: other.id, agentId: d.agent.id }, "production"),
        ).toBeNull();
        expect(await store.findLaunchAgent({ publicKey: unique("pk") }, "production")).toBeNull();
      });

      it("refuses a second agent with the same slug in one tenant, and allows it in another", async () => {
        const { store } = setup();
        const a = await newTenant(store);
        const b = await newTenant(store);
        await newAgent(store, a.id, "sales");
        const again = failure(
          await store.createAgent(a.id, {
            slug: "sales",
            name: "Again",
            visibility: "public",
            allowedOrigins: [],
            publicKey: unique("pk"),
          }),
          "conflict",
        );
        expect(paths(again.details)).toEqual(["slug"]);
        expect((await store.listAgents(a.id, { limit: 10 })).items).toHaveLength(1);
        expect((await newAgent(store, b.id, "sales")).slug).toBe("sales");
      });

      it("refuses a public key that any agent of any tenant already has", async () => {
        const { store } = setup();
        const a = await newTenant(store);
        const b = await newTenant(store);
        const first = await newAgent(store, a.id);
        const taken = failure(
          await store.createAgent(b.id, {
            slug: "copycat",
            name: "Copycat",
            visibility: "public",
            allowedOrigins: [],
            publicKey: first.publicKey,
          }),
          "conflict",
        );
        expect(paths(taken.details)).toEqual(["publicKey"]);
        expect((await store.listAgents(b.id, { limit: 10 })).items).toEqual([]);
        expect(await store.findAgentByPublicKey(first.publicKey)).toEqual(first);
      });

      it("refuses invalid agent input with field paths and stores nothing", async () => {
        const { store } = setup();
        const tenant = await newTenant(store);
        const bad = failure(
          await store.createAgent(tenant.id, {
            slug: "Not A Slug",
            name: "",
            visibility: "secret" as "public",
            allowedOrigins: [],
            publicKey: unique("pk"),
          }),
          "bad_request",
        );
        expect(paths(bad.details)).toEqual(expect.arrayContaining(["slug", "name", "visibility"]));
        expect((await store.listAgents(tenant.id, { limit: 10 })).items).toEqual([]);
      });

      it("refuses an agent for a tenant that does not exist", async () => {
        const { store } = setup();
        failure(
          await store.createAgent("ten_missing", {
            slug: "ghost",
            name: "Ghost",
            visibility: "public",
            allowedOrigins: [],
            publicKey: unique("pk"),
          }),
          "not_found",
        );
        expect((await store.listAgents("ten_missing", { limit: 10 })).items).toEqual([]);
      });

      it("lists a tenant's agents in creation order with keyset pages; `next` is absent on the last page", async () => {
        const { store, clock } = setup();
        const tenant = await newTenant(store);
        const other = await newTenant(store);
        await newAgent(store, other.id);
        const created: AgentEntity[] = [];
        for (let i = 0; i < 5; i++) {
          // Two agents share a timestamp, so the id must break the tie without skipping or repeating one.
          if (i !== 2) clock.advance();
          created.push(await newAgent(store, tenant.id));
        }
        const seen: AgentEntity[] = [];
        const sizes: number[] = [];
        let after: string | undefined;
        do {
          const page = await store.listAgents(
            tenant.id,
            after === undefined ? { limit: 2 } : { limit: 2, after },
          );
          seen.push(...page.items);
          sizes.push(page.items.length);
          after = page.next;
        } while (after !== undefined);
        expect(sizes).toEqual([2, 2, 1]);
        const expected = [...created].sort((x, y) =>
          x.createdAt === y.createdAt ? (x.id < y.id ? -1 : 1) : x.createdAt < y.createdAt ? -1 : 1,
        );
        expect(seen).toEqual(expected);
        const exact = await store.listAgents(tenant.id, { limit: 5 });
        expect(exact.items).toHaveLength(5);
        expect(exact.next).toBeUndefined();
      });

      it("patches only the named fields and rotates the public key", async () => {
        const { store, clock } = setup();
        const tenant = await newTenant(store);
        const agent = await newAgent(store, tenant.id);
        const rotatedKey = unique("pk");
        const later = clock.advance();
        const updated = value(
          await store.updateAgent(tenant.id, agent.id, {
            name: "Renamed",
            status: "disabled",
            publicKey: rotatedKey,
          }),
        );
        expect(updated).toEqual({
          ...agent,
          name: "Renamed",
          status: "disabled",
          publicKey: rotatedKey,
          updatedAt: later,
        });
        expect(await store.getAgent(tenant.id, agent.id)).toEqual(updated);
        expect(await store.findAgentByPublicKey(agent.publicKey)).toBeNull();
        expect(await store.findAgentByPublicKey(rotatedKey)).toEqual(updated);
        expect(value(await store.updateAgent(tenant.id, agent.id, {}))).toEqual(updated);
        const origins = value(await store.updateAgent(tenant.id, agent.id, { allowedOrigins: [] }));
        expect(origins.allowedOrigins).toEqual([]);
        expect(origins.name).toBe("Renamed");
      });

      it("refuses a patch that takes another agent's public key, and changes nothing", async () => {
        const { store } = setup();
        const tenant = await newTenant(store);
        const a = await newAgent(store, tenant.id);
        const b = await newAgent(store, tenant.id);
        failure(await store.updateAgent(tenant.id, b.id, { name: "B2", publicKey: a.publicKey }), "conflict");
        expect(await store.getAgent(tenant.id, b.id)).toEqual(b);
        failure(await store.updateAgent(tenant.id, b.id, { status: "paused" as "active" }), "bad_request");
        expect(await store.getAgent(tenant.id, b.id)).toEqual(b);
        failure(await store.updateAgent(tenant.id, "agt_missing", { name: "X" }), "not_found");
      });

      it("hands out copies: mutating a returned agent never changes the store", async () => {
        const { store, tenant, agent } = await world();
        agent.allowedOrigins.push("https://evil.example");
        agent.name = "Mutated";
        const read = await store.getAgent(tenant.id, agent.id);
        expect(read?.allowedOrigins).toEqual(["https://shop.example.com"]);
        expect(read?.name).not.toBe("Mutated");
      });
    });

    describe("drafts", () => {
      it("creates with expected revision 0, then advances only from the current revision", async () => {
        const { store, tenant, agent, clock } = await world();
        expect(await store.getDraft(tenant.id, agent.id)).toBeNull();
        expect(value(await store.saveDraft(tenant.id, agent.id, 0, { name: "one" }))).toEqual({
          revision: 1,
        });
        const at = clock.advance();
        expect(value(await store.saveDraft(tenant.id, agent.id, 1, { name: "two" }))).toEqual({
          revision: 2,
        });
        const current = {
          tenantId: tenant.id,
          agentId: agent.id,
          revision: 2,
          definition: { name: "two" },
          updatedAt: at,
        };
        expect(await store.getDraft(tenant.id, agent.id)).toEqual(current);

        failure(await store.saveDraft(tenant.id, agent.id, 1, { name: "stale" }), "precondition_failed");
        failure(await store.saveDraft(tenant.id, agent.id, 0, { name: "recreate" }), "precondition_failed");
        failure(await store.saveDraft(tenant.id, agent.id, 7, { name: "future" }), "precondition_failed");
        expect(await store.getDraft(tenant.id, agent.id)).toEqual(current);
      });

      it("refuses a positive expected revision when no draft exists, writing nothing", async () => {
        const { store, tenant, agent } = await world();
        failure(await store.saveDraft(tenant.id, agent.id, 1, { name: "x" }), "precondition_failed");
        expect(await store.getDraft(tenant.id, agent.id)).toBeNull();
      });

      it("lets exactly one of two concurrent saves from the same revision win", async () => {
        const { store, tenant, agent } = await world();
        value(await store.saveDraft(tenant.id, agent.id, 0, { n: 0 }));
        const results = await Promise.all([
          store.saveDraft(tenant.id, agent.id, 1, { n: 1 }),
          store.saveDraft(tenant.id, agent.id, 1, { n: 2 }),
        ]);
        const winners = results.filter((r) => r.ok);
        expect(winners).toHaveLength(1);
        expect(results.filter((r) => !r.ok && r.code === "precondition_failed")).toHaveLength(1);
        expect((await store.getDraft(tenant.id, agent.id))?.revision).toBe(2);
      });

      it("keeps each agent's draft its own: saving under agent B never touches agent A's", async () => {
        const { store, tenant, agent: a } = await world();
        const b = await newAgent(store, tenant.id);
        value(await store.saveDraft(tenant.id, a.id, 0, { name: "A" }));
        value(await store.saveDraft(tenant.id, a.id, 1, { name: "A2" }));
        expect(value(await store.saveDraft(tenant.id, b.id, 0, { name: "B" }))).toEqual({ revision: 1 });
        failure(
          await store.saveDraft(tenant.id, b.id, 2, { name: "B from A's revision" }),
          "precondition_failed",
        );
        expect((await store.getDraft(tenant.id, a.id))?.definition).toEqual({ name: "A2" });
        expect((await store.getDraft(tenant.id, a.id))?.revision).toBe(2);
        expect((await store.getDraft(tenant.id, b.id))?.definition).toEqual({ name: "B" });
      });

      it("accepts any JSON object, even one that is not yet a valid artifact", async () => {
        const { store, tenant, agent } = await world();
        const sketch = { name: "", notes: ["todo"], model: { provider: "who knows" }, dropped: undefined };
        value(await store.saveDraft(tenant.id, agent.id, 0, sketch));
        expect((await store.getDraft(tenant.id, agent.id))?.definition).toEqual({
          name: "",
          notes: ["todo"],
          model: { provider: "who knows" },
        });
      });

      it("refuses a definition that is not a JSON object, or a bad revision, writing nothing", async () => {
        const { store, tenant, agent } = await world();
        for (const definition of [[1, 2], "text", null, 42, { n: Number.NaN }, { deep: [undefined] }]) {
          const refused = failure(await store.saveDraft(tenant.id, agent.id, 0, definition), "bad_request");
          expect(paths(refused.details)).toEqual(["(root)"]);
        }
        failure(await store.saveDraft(tenant.id, agent.id, -1, { name: "x" }), "bad_request");
        failure(await store.saveDraft(tenant.id, agent.id, 0.5, { name: "x" }), "bad_request");
        expect(await store.getDraft(tenant.id, agent.id)).toBeNull();
      });

      it("refuses a draft for an agent that does not exist", async () => {
        const { store, tenant } = await world();
        failure(await store.saveDraft(tenant.id, "agt_missing", 0, { name: "x" }), "not_found");
        expect(await store.getDraft(tenant.id, "agt_missing")).toBeNull();
      });

      it("hands out copies of the definition", async () => {
        const { store, tenant, agent } = await world();
        value(await store.saveDraft(tenant.id, agent.id, 0, artifact()));
        const draft = await store.getDraft(tenant.id, agent.id);
        (draft?.definition.model as { model: string }).model = "mutated";
        expect((await store.getDraft(tenant.id, agent.id))?.definition).toEqual(artifact());
      });
    });

    describe("versions", () => {
      it("publishes exactly the named draft revision as version 1 with its canonical digest", async () => {
        const { store, tenant, agent, clock } = await world();
        const definition = artifact("Support", {
          greeting: "Hi!",
          model: { model: "echo", provider: "local" },
        });
        value(await store.saveDraft(tenant.id, agent.id, 0, definition));
        const at = clock.advance();
        const version = value(await store.publishDraft(tenant.id, agent.id, 1));
        expect(version).toEqual({
          tenantId: tenant.id,
          agentId: agent.id,
          id: expect.stringMatching(/^ver_[a-z2-7]{26}$/),
          version: 1,
          draftRevision: 1,
          digest: await digestOf(definition),
          artifact: definition,
          createdAt: at,
        });
        expect(version.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(value(await store.getVersion(tenant.id, agent.id, 1))).toEqual(version);
        expect(value(await store.getVersionById(tenant.id, version.id))).toEqual(version);
      });

      it("refuses a stale draft revision and writes no version", async () => {
        const { store, tenant, agent } = await world();
        value(await store.saveDraft(tenant.id, agent.id, 0, artifact("first")));
        value(await store.saveDraft(tenant.id, agent.id, 1, artifact("second")));
        failure(await store.publishDraft(tenant.id, agent.id, 1), "precondition_failed");
        failure(await store.publishDraft(tenant.id, agent.id, 3), "precondition_failed");
        expect((await store.listVersions(tenant.id, agent.id, { limit: 10 })).items).toEqual([]);
        const published = value(await store.publishDraft(tenant.id, agent.id, 2));
        expect(published.artifact.name).toBe("second");
      });

      it("refuses to publish when there is no draft", async () => {
        const { store, tenant, agent } = await world();
        failure(await store.publishDraft(tenant.id, agent.id, 1), "not_found");
        failure(await store.publishDraft(tenant.id, "agt_missing", 1), "not_found");
        failure(await store.publishDraft(tenant.id, agent.id, 0), "bad_request");
      });

      it("refuses an invalid artifact as bad_request naming each field path, never conflict", async () => {
        const { store, tenant, agent } = await world();
        const definition = {
          ...artifact(),
          colour: "blue",
          model: { provider: "anthropic", model: "claude", local: { chunks: 3 }, extra: true },
          tools: [{ name: "lookup", description: "Looks up.", url: "http://plain.example.com" }],
        };
        value(await store.saveDraft(tenant.id, agent.id, 0, definition));
        const refused = failure(await store.publishDraft(tenant.id, agent.id, 1), "bad_request");
        expect(refused.details).toEqual(
          expect.arrayContaining([
            { path: "colour", message: expect.any(String) },
            { path: "model.extra", message: expect.any(String) },
            { path: "tools.0.url", message: expect.any(String) },
          ]),
        );
        expect((await store.listVersions(tenant.id, agent.id, { limit: 10 })).items).toEqual([]);

        value(
          await store.saveDraft(tenant.id, agent.id, 1, {
            ...artifact(),
            model: { provider: "anthropic", model: "c", local: {} },
          }),
        );
        const localOnly = failure(await store.publishDraft(tenant.id, agent.id, 2), "bad_request");
        expect(paths(localOnly.details)).toEqual(["model.local"]);

        value(await store.saveDraft(tenant.id, agent.id, 2, { name: "no schema" }));
        const missing = failure(await store.publishDraft(tenant.id, agent.id, 3), "bad_request");
        expect(paths(missing.details)).toEqual(
          expect.arrayContaining(["schemaVersion", "instructions", "model"]),
        );
        expect((await store.listVersions(tenant.id, agent.id, { limit: 10 })).items).toEqual([]);
      });

      it("numbers versions 1, 2, 3 per agent, each agent on its own", async () => {
        const { store, tenant, agent } = await world();
        const other = await newAgent(store, tenant.id);
        const numbers = [];
        for (const n of ["a", "b", "c"])
          numbers.push((await publish(store, tenant.id, agent.id, artifact(n))).version);
        expect(numbers).toEqual([1, 2, 3]);
        expect((await publish(store, tenant.id, other.id)).version).toBe(1);
        expect(value(await store.getVersion(tenant.id, agent.id, 2)).artifact.name).toBe("b");
        failure(await store.getVersion(tenant.id, agent.id, 4), "not_found");
        for (const bad of [0, -1, 1.5, Number.NaN])
          failure(await store.getVersion(tenant.id, agent.id, bad), "not_found");
        failure(await store.getVersionById(tenant.id, "ver_missing"), "not_found");
      });

      it("gives concurrent publishes distinct consecutive numbers: each version number is written once", async () => {
        const { store, tenant, agent } = await world();
        value(await store.saveDraft(tenant.id, agent.id, 0, artifact("racer")));
        const results = await Promise.all(
          Array.from({ length: 5 }, () => store.publishDraft(tenant.id, agent.id, 1)),
        );
        const versions = results.map((r) => value(r));
        expect(versions.map((v) => v.version).sort()).toEqual([1, 2, 3, 4, 5]);
        expect(new Set(versions.map((v) => v.id)).size).toBe(5);
        const listed = (await store.listVersions(tenant.id, agent.id, { limit: 10 })).items;
        expect(listed.map((v) => v.version)).toEqual([1, 2, 3, 4, 5]);
        for (const v of versions) expect(listed.find((l) => l.version === v.version)).toEqual(v);
      });

      it("lists versions in number order with keyset pages", async () => {
        const { store, tenant, agent } = await world();
        for (const n of ["a", "b", "c"]) await publish(store, tenant.id, agent.id, artifact(n));
        const first = await store.listVersions(tenant.id, agent.id, { limit: 2 });
        expect(first.items.map((v) => v.version)).toEqual([1, 2]);
        expect(first.next).toEqual(expect.any(String));
        const second = await store.listVersions(tenant.id, agent.id, { limit: 2, after: first.next! });
        expect(second.items.map((v) => v.artifact.name)).toEqual(["c"]);
        expect(second.next).toBeUndefined();
      });

      it("hands out deep copies of artifacts", async () => {
        const { store, tenant, agent } = await world();
        const version = await publish(
          store,
          tenant.id,
          agent.id,
          artifact("original", { suggestedPrompts: ["hi"] }),
        );
        version.artifact.name = "mutated";
        version.artifact.model.model = "mutated";
        version.artifact.suggestedPrompts?.push("mutated");
        const read = value(await store.getVersion(tenant.id, agent.id, 1));
        expect(read.artifact).toEqual(artifact("original", { suggestedPrompts: ["hi"] }));
        read.artifact.model.provider = "anthropic";
        expect(value(await store.getVersionById(tenant.id, version.id)).artifact.model.provider).toBe(
          "local",
        );
        expect(await digestOf(value(await store.getVersion(tenant.id, agent.id, 1)).artifact)).toBe(
          version.digest,
        );
      });

      it("re-verifies the digest on read: a tampered stored artifact is refused as internal", async () => {
        const { store, tenant, agent, tamperArtifact } = await world();
        const version = await publish(store, tenant.id, agent.id, artifact("honest"));
        await tamperArtifact(tenant.id, version.id, JSON.stringify(artifact("tampered")));
        const byNumber = failure(await store.getVersion(tenant.id, agent.id, 1), "internal");
        expect(byNumber.message).toBe("Stored artifact failed its digest check.");
        failure(await store.getVersionById(tenant.id, version.id), "internal");
        await expect(store.listVersions(tenant.id, agent.id, { limit: 10 })).rejects.toMatchObject({
          code: "internal",
        });
        await tamperArtifact(tenant.id, version.id, "{not json");
        failure(await store.getVersion(tenant.id, agent.id, 1), "internal");
      });
    });

    describe("runtimes and releases", () => {
      it("registers a runtime idempotently; CURRENT_RUNTIME supports schema version 1", async () => {
        const { store, tenant, agent } = await world();
        // A changed capability list is a new revision id (src/control/runtime.ts): this pins the pair together.
        expect(CURRENT_RUNTIME).toEqual({
          id: "runtime-2026-12",
          supportedSchemaVersions: [1],
          capabilities: [
            "tools.server",
            "tools.client",
            "approvals",
            "attachments",
            "handoff",
            "upgrades",
            "context",
          ],
        });
        await store.registerRuntime(CURRENT_RUNTIME);
        await store.registerRuntime(CURRENT_RUNTIME);
        await publish(store, tenant.id, agent.id);
        const release = value(
          await store.createRelease(tenant.id, agent.id, {
            environment: "staging",
            runtimeRevision: CURRENT_RUNTIME.id,
            allocations: [{ version: 1, weight: 10_000 }],
          }),
        );
        expect(release.runtimeRevision).toBe("runtime-2026-12");
        expect(await store.getRuntime(CURRENT_RUNTIME.id)).toEqual(CURRENT_RUNTIME);
      });

      it("stores a runtime's capabilities; registering again replaces them; an unknown id reads null", async () => {
        const { store } = setup();
        const r = await runtime(store, [1], ["tools.server", "approvals"]);
        expect(await store.getRuntime(r.id)).toEqual({
          id: r.id,
          supportedSchemaVersions: [1],
          capabilities: ["tools.server", "approvals"],
        });
        await store.registerRuntime({ id: r.id, supportedSchemaVersions: [1, 2], capabilities: [] });
        expect(await store.getRuntime(r.id)).toEqual({
          id: r.id,
          supportedSchemaVersions: [1, 2],
          capabilities: [],
        });
        expect(await store.getRuntime(unique("never-registered"))).toBeNull();
        for (const capabilities of [["Tools"], ["tools..server"], ["approvals", "approvals"]]) {
          await expect(
            store.registerRuntime({ id: unique("bad"), supportedSchemaVersions: [1], capabilities }),
          ).rejects.toThrow();
        }
      });

      it("creates a release with resolved version ids, inactive until activated", async () => {
        const { store, tenant, agent, clock } = await world();
        const v1 = await publish(store, tenant.id, agent.id, artifact("one"));
        const v2 = await publish(store, tenant.id, agent.id, artifact("two"));
        const r = await runtime(store);
        const at = clock.advance();
        const release = value(
          await store.createRelease(tenant.id, agent.id, {
            environment: "production",
            runtimeRevision: r.id,
            allocations: [
              { version: 2, weight: 9000 },
              { version: 1, weight: 1000 },
            ],
          }),
        );
        expect(release).toEqual({
          tenantId: tenant.id,
          id: expect.stringMatching(/^rel_[a-z2-7]{26}$/),
          agentId: agent.id,
          environment: "production",
          runtimeRevision: r.id,
          allocations: [
            { version: 2, weight: 9000, versionId: v2.id },
            { version: 1, weight: 1000, versionId: v1.id },
          ],
          createdAt: at,
          activatedAt: null,
          active: false,
        });
        expect(await store.getRelease(tenant.id, agent.id, release.id)).toEqual(release);
        expect((await store.listReleases(tenant.id, agent.id, { limit: 10 })).items).toEqual([release]);
        expect(await store.getActiveRelease(tenant.id, agent.id, "production")).toBeNull();
      });

      it("refuses invalid releases with field paths and writes none", async () => {
        const { store, tenant, agent } = await world();
        const other = await newAgent(store, tenant.id);
        await publish(store, tenant.id, agent.id, artifact("one"));
        await publish(store, tenant.id, agent.id, artifact("two"));
        await publish(store, tenant.id, other.id, artifact("other's"));
        await publish(store, tenant.id, other.id, artifact("other's 2"));
        await publish(store, tenant.id, other.id, artifact("other's 3"));
        const r = await runtime(store);
        const old = await runtime(store, [2]);
        const cases: [unknown, string][] = [
          [{ environment: "production", runtimeRevision: r.id, allocations: [] }, "allocations"],
          [
            { environment: "production", runtimeRevision: r.id, allocations: [{ version: 1, weight: 9999 }] },
            "allocations",
          ],
          [
            {
              environment: "production",
              runtimeRevision: r.id,
              allocations: [
                { version: 1, weight: 0 },
                { version: 2, weight: 10_000 },
              ],
            },
            "allocations.0.weight",
          ],
          [
            {
              environment: "production",
              runtimeRevision: r.id,
              allocations: [
                { version: 1, weight: 5000.5 },
                { version: 2, weight: 4999.5 },
              ],
            },
            "allocations.0.weight",
          ],
          [
            {
              environment: "production",
              runtimeRevision: r.id,
              allocations: [
                { version: 1, weight: 5000 },
                { version: 1, weight: 5000 },
              ],
            },
            "allocations.1.version",
          ],
          [
            { environment: "prod", runtimeRevision: r.id, allocations: [{ version: 1, weight: 10_000 }] },
            "environment",
          ],
          [
            {
              environment: "production",
              runtimeRevision: r.id,
              allocations: [{ version: 3, weight: 10_000 }],
            },
            "allocations.0.version",
          ],
          [
            {
              environment: "production",
              runtimeRevision: unique("unknown"),
              allocations: [{ version: 1, weight: 10_000 }],
            },
            "runtimeRevision",
          ],
          [
            {
              environment: "production",
              runtimeRevision: old.id,
              allocations: [{ version: 2, weight: 10_000 }],
            },
            "allocations.0.version",
          ],
          [
            {
              environment: "production",
              runtimeRevision: r.id,
              allocations: [
                { version: 2, weight: 5000 },
                { version: 0, weight: 5000 },
              ],
            },
            "allocations.1.version",
          ],
        ];
        for (const [input, path] of cases) {
          const refused = failure(
            await store.createRelease(
              tenant.id,
              agent.id,
              input as Parameters<DeploymentStore["createRelease"]>[2],
            ),
            "bad_request",
          );
          expect(paths(refused.details), JSON.stringify(input)).toContain(path);
        }
        // Version 3 exists, but for another agent of the same tenant.
        expect(value(await store.getVersion(tenant.id, other.id, 3)).version).toBe(3);
        expect((await store.listReleases(tenant.id, agent.id, { limit: 10 })).items).toEqual([]);
        failure(
          await store.createRelease(tenant.id, "agt_missing", {
            environment: "production",
            runtimeRevision: r.id,
            allocations: [{ version: 1, weight: 10_000 }],
          }),
          "not_found",
        );
      });

      it("activating a release replaces the active one for that environment only", async () => {
        const { store, tenant, agent, clock } = await world();
        await publish(store, tenant.id, agent.id, artifact("one"));
        await publish(store, tenant.id, agent.id, artifact("two"));
        const r = await runtime(store);
        const make = async (environment: Environment, version: number) =>
          value(
            await store.createRelease(tenant.id, agent.id, {
              environment,
              runtimeRevision: r.id,
              allocations: [{ version, weight: 10_000 }],
            }),
          );
        const first = await make("production", 1);
        const second = await make("production", 2);
        const staging = await make("staging", 2);
        const firstAt = clock.advance();
        expect(value(await store.activateRelease(tenant.id, agent.id, first.id))).toEqual({
          ...first,
          activatedAt: firstAt,
          active: true,
        });
        value(await store.activateRelease(tenant.id, agent.id, staging.id));
        const secondAt = clock.advance();
        const activated = value(await store.activateRelease(tenant.id, agent.id, second.id));
        expect(activated).toMatchObject({ id: second.id, active: true, activatedAt: secondAt });
        expect(await store.getActiveRelease(tenant.id, agent.id, "production")).toEqual(activated);
        expect(await store.getRelease(tenant.id, agent.id, first.id)).toMatchObject({
          active: false,
          activatedAt: firstAt,
        });
        expect((await store.getActiveRelease(tenant.id, agent.id, "staging"))?.id).toBe(staging.id);
        expect(await store.getActiveRelease(tenant.id, agent.id, "development")).toBeNull();
        const listed = (await store.listReleases(tenant.id, agent.id, { limit: 10 })).items;
        expect(
          listed
            .filter((x) => x.active)
            .map((x) => x.id)
            .sort(),
        ).toEqual([second.id, staging.id].sort());
      });

      it("refuses to activate another agent's or an unknown release, changing nothing", async () => {
        const { store, tenant, agent } = await deployed([10_000]);
        const other = await newAgent(store, tenant.id);
        const before = await store.getActiveRelease(tenant.id, agent.id, "production");
        failure(await store.activateRelease(tenant.id, other.id, before!.id), "not_found");
        failure(await store.activateRelease(tenant.id, agent.id, "rel_missing"), "not_found");
        expect(await store.getActiveRelease(tenant.id, other.id, "production")).toBeNull();
        expect(await store.getActiveRelease(tenant.id, agent.id, "production")).toEqual(before);
        expect(await store.getRelease(tenant.id, other.id, before!.id)).toBeNull();
      });

      it("lists releases in creation order with keyset pages", async () => {
        const { store, tenant, agent, clock } = await world();
        await publish(store, tenant.id, agent.id);
        const r = await runtime(store);
        const ids: string[] = [];
        for (let i = 0; i < 3; i++) {
          clock.advance();
          const release = value(
            await store.createRelease(tenant.id, agent.id, {
              environment: "development",
              runtimeRevision: r.id,
              allocations: [{ version: 1, weight: 10_000 }],
            }),
          );
          ids.push(release.id);
        }
        const first = await store.listReleases(tenant.id, agent.id, { limit: 2 });
        const second = await store.listReleases(tenant.id, agent.id, { limit: 2, after: first.next! });
        expect([...first.items, ...second.items].map((x) => x.id)).toEqual(ids);
        expect(second.next).toBeUndefined();
        expect(first.items[0]?.allocations).toHaveLength(1);
      });
    });

    describe("thread pins", () => {
      it("refuses to assign a thread when no release is active, writing no pin", async () => {
        const { store, tenant, agent } = await world();
        await publish(store, tenant.id, agent.id);
        const threadId = unique("thread");
        failure(
          await store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId }),
          "not_found",
        );
        failure(
          await store.assignThread(tenant.id, {
            agentId: "agt_missing",
            environment: "production",
            threadId,
          }),
          "not_found",
        );
        expect(await store.getPin(tenant.id, threadId)).toBeNull();
      });

      it("pins a new thread to the allocated version, and returns that pin unchanged after a new release", async () => {
        const { store, tenant, agent, release, clock } = await deployed([10_000]);
        const threadId = unique("thread");
        const at = clock.advance();
        const v1 = value(await store.getVersion(tenant.id, agent.id, 1));
        const pin = value(
          await store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId }),
        );
        expect(pin).toEqual({
          tenantId: tenant.id,
          threadId,
          agentId: agent.id,
          environment: "production",
          releaseId: release.id,
          versionId: v1.id,
          version: 1,
          digest: v1.digest,
          createdAt: at,
        });
        expect(await store.getPin(tenant.id, threadId)).toEqual(pin);

        const v2 = await publish(store, tenant.id, agent.id, artifact("v2"));
        const next = value(
          await store.createRelease(tenant.id, agent.id, {
            environment: "production",
            runtimeRevision: CURRENT_RUNTIME.id,
            allocations: [{ version: 2, weight: 10_000 }],
          }),
        );
        value(await store.activateRelease(tenant.id, agent.id, next.id));
        clock.advance();
        expect(
          value(
            await store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId }),
          ),
        ).toEqual(pin);
        const fresh = value(
          await store.assignThread(tenant.id, {
            agentId: agent.id,
            environment: "production",
            threadId: unique("thread"),
          }),
        );
        expect(fresh).toMatchObject({ releaseId: next.id, versionId: v2.id, version: 2, digest: v2.digest });
      });

      it("assigns deterministically by bucket and cumulative weight", async () => {
        const { store, tenant, agent, release } = await deployed([5000, 5000]);
        const seen = new Set<number>();
        for (let i = 0; i < 24; i++) {
          const threadId = unique("thread");
          const bucket = await bucketFor({
            tenantId: tenant.id,
            environment: "production",
            agentId: agent.id,
            releaseId: release.id,
            threadId,
          });
          const expected = pickAllocation(release.allocations, bucket);
          const pin = value(
            await store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId }),
          );
          expect(pin.version).toBe(expected.version);
          expect(pin.versionId).toBe(expected.versionId);
          seen.add(pin.version);
        }
        expect(seen).toEqual(new Set([1, 2]));
      });

      it("refuses an existing pin for another agent or environment, leaving it as it was", async () => {
        const { store, tenant, agent } = await deployed([10_000]);
        const other = await newAgent(store, tenant.id);
        await publish(store, tenant.id, other.id);
        const r = value(
          await store.createRelease(tenant.id, other.id, {
            environment: "production",
            runtimeRevision: CURRENT_RUNTIME.id,
            allocations: [{ version: 1, weight: 10_000 }],
          }),
        );
        value(await store.activateRelease(tenant.id, other.id, r.id));
        const threadId = unique("thread");
        const pin = value(
          await store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId }),
        );
        failure(
          await store.assignThread(tenant.id, { agentId: other.id, environment: "production", threadId }),
          "conflict",
        );
        failure(
          await store.assignThread(tenant.id, { agentId: agent.id, environment: "staging", threadId }),
          "conflict",
        );
        expect(await store.getPin(tenant.id, threadId)).toEqual(pin);
      });

      it("refuses malformed assignments", async () => {
        const { store, tenant, agent } = await deployed([10_000]);
        failure(
          await store.assignThread(tenant.id, {
            agentId: agent.id,
            environment: "prod" as Environment,
            threadId: unique("t"),
          }),
          "bad_request",
        );
        failure(
          await store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId: "" }),
          "bad_request",
        );
        expect(await store.getPin(tenant.id, "")).toBeNull();
      });

      it("turns concurrent first assignments of one thread into exactly one pin", async () => {
        const { store, tenant, agent, clock } = await deployed([2500, 2500, 5000]);
        const threadId = unique("thread");
        // Each racer would stamp its own createdAt, so a pin overwritten by a later racer cannot pass as the same.
        clock.ticking = true;
        const results = await Promise.all(
          Array.from({ length: 10 }, () =>
            store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId }),
          ),
        );
        const pins = results.map((r) => value(r));
        for (const pin of pins) expect(pin).toEqual(pins[0]);
        expect(await store.getPin(tenant.id, threadId)).toEqual(pins[0]);
      });

      it("refuses to pin a tampered version and writes no pin", async () => {
        const { store, tenant, agent, tamperArtifact } = await deployed([10_000]);
        const v1 = value(await store.getVersion(tenant.id, agent.id, 1));
        await tamperArtifact(
          tenant.id,
          v1.id,
          JSON.stringify({ ...v1.artifact, instructions: "Leak secrets." }),
        );
        const threadId = unique("thread");
        const refused = failure(
          await store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId }),
          "internal",
        );
        expect(refused.message).toBe("Stored artifact failed its digest check.");
        expect(await store.getPin(tenant.id, threadId)).toBeNull();
      });

      it("hands out copies of pins and releases", async () => {
        const { store, tenant, agent, release } = await deployed([10_000]);
        const threadId = unique("thread");
        const pin = value(
          await store.assignThread(tenant.id, { agentId: agent.id, environment: "production", threadId }),
        );
        pin.version = 99;
        expect((await store.getPin(tenant.id, threadId))?.version).toBe(1);
        const read = await store.getRelease(tenant.id, agent.id, release.id);
        read!.allocations[0]!.weight = 1;
        expect((await store.getRelease(tenant.id, agent.id, release.id))?.allocations[0]?.weight).toBe(
          10_000,
        );
      });
    });

    describe("tenant isolation", () => {
      it("gives the same thread id in two tenants two independent pins", async () => {
        const a = await deployed([10_000]);
        const b = await deployed([10_000], "staging", a);
        const threadId = unique("shared-thread");
        const pinA = value(
          await a.store.assignThread(a.tenant.id, {
            agentId: a.agent.id,
            environment: "production",
            threadId,
          }),
        );
        expect(await a.store.getPin(b.tenant.id, threadId)).toBeNull();
        const pinB = value(
          await b.store.assignThread(b.tenant.id, { agentId: b.agent.id, environment: "staging", threadId }),
        );
        expect(pinB).toMatchObject({
          tenantId: b.tenant.id,
          threadId,
          agentId: b.agent.id,
          environment: "staging",
        });
        expect(await a.store.getPin(a.tenant.id, threadId)).toEqual(pinA);
        expect(await b.store.getPin(b.tenant.id, threadId)).toEqual(pinB);
      });

      it("never lets tenant B read or change tenant A's agent, draft, versions, releases or pins", async () => {
        const { store, tenant: a, agent, release } = await deployed([10_000]);
        const b = await newTenant(store);
        const threadId = unique("thread");
        const pin = value(
          await store.assignThread(a.id, { agentId: agent.id, environment: "production", threadId }),
        );
        const draftBefore = await store.getDraft(a.id, agent.id);
        const version = value(await store.getVersion(a.id, agent.id, 1));

        expect(await store.getAgent(b.id, agent.id)).toBeNull();
        expect((await store.listAgents(b.id, { limit: 10 })).items).toEqual([]);
        failure(
          await store.updateAgent(b.id, agent.id, { name: "Hijacked", status: "disabled" }),
          "not_found",
        );
        expect(await store.getDraft(b.id, agent.id)).toBeNull();
        failure(await store.saveDraft(b.id, agent.id, 0, artifact("intruder")), "not_found");
        failure(
          await store.saveDraft(b.id, agent.id, draftBefore!.revision, artifact("intruder")),
          "not_found",
        );
        failure(await store.publishDraft(b.id, agent.id, draftBefore!.revision), "not_found");
        failure(await store.getVersion(b.id, agent.id, 1), "not_found");
        failure(await store.getVersionById(b.id, version.id), "not_found");
        expect((await store.listVersions(b.id, agent.id, { limit: 10 })).items).toEqual([]);
        failure(
          await store.createRelease(b.id, agent.id, {
            environment: "production",
            runtimeRevision: CURRENT_RUNTIME.id,
            allocations: [{ version: 1, weight: 10_000 }],
          }),
          "not_found",
        );
        failure(await store.activateRelease(b.id, agent.id, release.id), "not_found");
        expect(await store.getRelease(b.id, agent.id, release.id)).toBeNull();
        expect((await store.listReleases(b.id, agent.id, { limit: 10 })).items).toEqual([]);
        expect(await store.getActiveRelease(b.id, agent.id, "production")).toBeNull();
        failure(
          await store.assignThread(b.id, {
            agentId: agent.id,
            environment: "production",
            threadId: unique("t"),
          }),
          "not_found",
        );
        expect(await store.getPin(b.id, threadId)).toBeNull();

        // B's own agent cannot reach A's versions either.
        const bAgent = await newAgent(store, b.id);
        const crossed = failure(
          await store.createRelease(b.id, bAgent.id, {
            environment: "production",
            runtimeRevision: CURRENT_RUNTIME.id,
            allocations: [{ version: 1, weight: 10_000 }],
          }),
          "bad_request",
        );
        expect(paths(crossed.details)).toEqual(["allocations.0.version"]);
        failure(await store.activateRelease(b.id, bAgent.id, release.id), "not_found");

        expect(await store.getAgent(a.id, agent.id)).toEqual(agent);
        expect(await store.getDraft(a.id, agent.id)).toEqual(draftBefore);
        expect((await store.listVersions(a.id, agent.id, { limit: 10 })).items).toEqual([version]);
        expect(await store.getActiveRelease(a.id, agent.id, "production")).toMatchObject({
          id: release.id,
          active: true,
        });
        expect(await store.getPin(a.id, threadId)).toEqual(pin);
      });
    });
  });
}
