// Presentation (docs/protocol.md): the launch response and the `ready` frame carry the pinned version's title, greeting,
// prompts and widget settings (only those set), the greeting filled from the thread's context variables.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { presentationSchema } from "../../src/shared/presentation";
import { privateLaunchRequest } from "../helpers/edge-gate";
import {
  api,
  createAgent,
  createRelease,
  createTenant,
  expectError,
  fieldPaths,
  json,
  publish,
  saveDraft,
  validArtifact,
} from "../helpers/tenants";
import { connect, type LiveAgent, launchRequest, launchResponse, liveAgent } from "../helpers/threads";

const launched = launchResponse.extend({ presentation: presentationSchema.strict().optional() });

async function publicLaunch(agent: LiveAgent, extra: Record<string, unknown> = {}) {
  return json(await launchRequest({ agentKey: agent.publicKey, ...extra }), 201, launched);
}

async function privateLaunch(agent: LiveAgent, body: Record<string, unknown>) {
  const res = await privateLaunchRequest(agent.apiKey, { agentId: agent.agentId, subject: "alice", ...body });
  return json(res, 201, launched);
}

async function readyOf(session: { threadId: string; token: string }) {
  const reader = await connect(session);
  const ready = reader.all("ready")[0];
  reader.ws.close();
  if (ready === undefined) return expect.fail("no ready frame");
  return ready;
}

/** Publishes the draft's next revision as the next version and releases it to all development traffic. */
async function releaseNewVersion(agent: LiveAgent, revision: number, artifact: Record<string, unknown>) {
  await saveDraft(agent.apiKey, agent.agentId, revision, validArtifact(artifact));
  const version = await publish(agent.apiKey, agent.agentId, revision + 1);
  const release = await createRelease(agent.apiKey, agent.agentId, [
    { version: version.version, weight: 10_000 },
  ]);
  const res = await api(`/v1/agents/${agent.agentId}/releases/${release.id}/activate`, {
    method: "POST",
    key: agent.apiKey,
  });
  expect(res.status).toBe(200);
}

describe("presentation", () => {
  it("is in the launch response and the ready frame with only the fields the artifact sets", async () => {
    const agent = await liveAgent({
      artifact: {
        greeting: "Welcome to Acme.",
        suggestedPrompts: ["Track my order", "Talk to sales"],
        widget: { title: "Acme help", accentColor: "#0f766e", position: "bottom-left", locale: "es" },
      },
    });
    const expected = {
      title: "Acme help",
      greeting: "Welcome to Acme.",
      suggestedPrompts: ["Track my order", "Talk to sales"],
      accentColor: "#0f766e",
      position: "bottom-left",
      locale: "es",
    };
    const session = await publicLaunch(agent);
    expect(session.presentation).toEqual(expected);
    expect((await readyOf(session)).presentation).toEqual(expected);
  });

  it("carries theme and strings when set, and is empty for an artifact without presentation", async () => {
    const styled = await liveAgent({
      artifact: { widget: { theme: "dark", strings: { send: "Go", placeholder: "Ask us" } } },
    });
    const session = await publicLaunch(styled);
    const expected = { theme: "dark", strings: { send: "Go", placeholder: "Ask us" } };
    expect(session.presentation).toEqual(expected);
    expect((await readyOf(session)).presentation).toEqual(expected);

    const plain = await liveAgent();
    const bare = await publicLaunch(plain);
    expect(bare.presentation).toEqual({});
    expect((await readyOf(bare)).presentation).toEqual({});
  });

  it("offers attachments with the agent's policy, defaults applied, only when the agent takes them", async () => {
    const agent = await liveAgent({
      artifact: { attachments: { enabled: true, accept: ["image/png", "application/pdf"], maxFiles: 2 } },
    });
    const expected = {
      attachments: { accept: ["image/png", "application/pdf"], maxBytes: 10 * 1024 * 1024, maxFiles: 2 },
    };
    const session = await publicLaunch(agent);
    expect(session.presentation).toEqual(expected);
    expect((await readyOf(session)).presentation).toEqual(expected);

    const off = await liveAgent({ artifact: { attachments: { enabled: false } } });
    expect((await publicLaunch(off)).presentation).toEqual({});
  });

  it("fills the greeting from a private launch's context, unknown keys as empty, and follows the latest launch", async () => {
    const agent = await liveAgent({
      agent: { visibility: "private" },
      artifact: { greeting: "Hi {{ name }}, you are on {{plan}}.{{missing}} Seats: {{seats}}." },
    });
    const first = await privateLaunch(agent, { context: { name: "Alice", plan: "Pro", seats: 5 } });
    expect(first.presentation?.greeting).toBe("Hi Alice, you are on Pro. Seats: 5.");
    expect((await readyOf(first)).presentation?.greeting).toBe("Hi Alice, you are on Pro. Seats: 5.");

    const again = await privateLaunch(agent, { threadId: first.threadId, context: { name: "Al" } });
    expect(again.presentation?.greeting).toBe("Hi Al, you are on . Seats: .");
    expect((await readyOf(again)).presentation?.greeting).toBe("Hi Al, you are on . Seats: .");
  });

  it("shows a public agent's placeholders as empty text", async () => {
    const agent = await liveAgent({ artifact: { greeting: "Hello {{name}}! How can we help?" } });
    const session = await publicLaunch(agent);
    expect(session.presentation?.greeting).toBe("Hello ! How can we help?");
    expect((await readyOf(session)).presentation?.greeting).toBe("Hello ! How can we help?");
  });

  it("shows a placeholder's default where the launch has no such variable", async () => {
    const agent = await liveAgent({ artifact: { greeting: "Hi {{name|there}}! How can we help?" } });
    const session = await publicLaunch(agent);
    expect(session.presentation?.greeting).toBe("Hi there! How can we help?");
    expect((await readyOf(session)).presentation?.greeting).toBe("Hi there! How can we help?");
  });

  it("keeps presenting a refreshed thread's pinned version after a newer one is released", async () => {
    const agent = await liveAgent({
      artifact: { greeting: "Version one.", widget: { title: "One", accentColor: "#111111" } },
    });
    const first = await publicLaunch(agent);
    expect((await readyOf(first)).presentation?.title).toBe("One"); // the first connection pins version 1

    await releaseNewVersion(agent, 1, { greeting: "Version two.", widget: { title: "Two" } });

    const refreshed = await publicLaunch(agent, {
      threadId: first.threadId,
      visitorToken: first.visitorToken,
    });
    const pinned = { greeting: "Version one.", title: "One", accentColor: "#111111" };
    expect(refreshed.presentation).toEqual(pinned);
    const ready = await readyOf(refreshed);
    expect(ready.agent.version).toBe(1);
    expect(ready.presentation).toEqual(pinned);

    const fresh = await publicLaunch(agent);
    expect(fresh.presentation).toEqual({ greeting: "Version two.", title: "Two" });
    expect((await readyOf(fresh)).presentation).toEqual({ greeting: "Version two.", title: "Two" });
  });

  it("presents a launched but never connected thread as the release assigns it, and leaves it out without a release", async () => {
    const agent = await liveAgent({ artifact: { widget: { title: "Assigned" } } });
    const first = await publicLaunch(agent);
    const refreshed = await publicLaunch(agent, {
      threadId: first.threadId,
      visitorToken: first.visitorToken,
    });
    expect(refreshed.presentation).toEqual({ title: "Assigned" });

    const tenant = await createTenant();
    const unreleased = await createAgent(tenant.apiKey, { allowedOrigins: ["https://shop.example.com"] });
    await saveDraft(tenant.apiKey, unreleased.id, 0, validArtifact({ widget: { title: "Hidden" } }));
    await publish(tenant.apiKey, unreleased.id, 1);
    const res = await launchRequest({ agentKey: unreleased.publicKey });
    if (res.status === 201) {
      expect(
        z
          .object({ presentation: z.unknown() })
          .partial()
          .parse(await res.json()).presentation,
      ).toBe(undefined);
    } else {
      // A build that refuses launches without an active release (docs/protocol.md) presents nothing either.
      expect(res.status).toBe(409);
    }
  });

  it("refuses to publish an artifact whose widget locale is not a language tag, and stores no version", async () => {
    const tenant = await createTenant();
    const agent = await createAgent(tenant.apiKey);
    let revision = 0;
    for (const locale of ["english", "EN", "e", "es_ES", "es-", `es-${"x".repeat(40)}`, 7]) {
      revision = (await saveDraft(tenant.apiKey, agent.id, revision, validArtifact({ widget: { locale } })))
        .revision;
      const res = await api(`/v1/agents/${agent.id}/versions`, {
        method: "POST",
        key: tenant.apiKey,
        body: { draftRevision: revision },
      });
      const error = await expectError(res, 400, "bad_request");
      expect(
        fieldPaths(error).some((path) => path.endsWith("widget.locale")),
        JSON.stringify(error),
      ).toBe(true);
    }
    const versions = await api(`/v1/agents/${agent.id}/versions`, { key: tenant.apiKey });
    expect(await json(versions, 200, z.object({ items: z.array(z.unknown()) }))).toEqual({ items: [] });

    for (const locale of ["es", "pt-BR", "zh-Hant-TW"]) {
      revision = (await saveDraft(tenant.apiKey, agent.id, revision, validArtifact({ widget: { locale } })))
        .revision;
      expect((await publish(tenant.apiKey, agent.id, revision)).version).toBeGreaterThan(0);
    }
  });
});
